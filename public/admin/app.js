// @ts-check
// The admin screen: sign-in, the header (views, language, the operator), and routing by the URL's
// fragment (#/faxes?..., #/faxes/<id>, #/overview, #/jobs?..., #/jobs/<id>, #/audit), so that every
// view is a deep link. The inbox (#/faxes) is the first view, for every role. A link Auth
// e-mailed (a password recovery, an invitation) returns here with its session in the fragment
// instead (#access_token=...&type=recovery): the page takes it, clears it from the address, and asks
// for a new password.

import * as accounts from "./accounts.js";
import { api } from "./api.js";
import * as audit from "./audit.js";
import { h, replace } from "./dom.js";
import * as fax from "./fax.js";
import { LANGUAGES, language, setLanguage, t } from "./i18n.js";
import * as inbox from "./inbox.js";
import * as job from "./job.js";
import * as jobs from "./jobs.js";
import * as overview from "./overview.js";
import * as session from "./session.js";
import { authRefusal, notice, operator, problemText, setOperator } from "./ui.js";

/** @typedef {import("./ui.js").Operator} Operator */

/** The page's element that the screen is drawn in. */
function appRoot() {
  const element = document.getElementById("app");
  if (!element) throw new Error('the page has no element with id="app"');
  return element;
}

const root = appRoot();
/** @type {string | null} the key of the message that says why the session ended, shown at sign-in */
let signedOutMessage = null;
/** How many times the view was routed: the latest route alone moves the focus. */
let routes = 0;

function languageSwitch() {
  const select = h("select", { "aria-label": t("language.label"), class: "language" },
    Object.entries(LANGUAGES).map(([code, name]) => h("option", { value: code, selected: code === language() }, name)));
  select.addEventListener("change", () => {
    setLanguage(select.value);
    route();
  });
  return select;
}

/** @param {string | null} view the view shown (marked in the navigation), or none */
function header(view) {
  const who = operator();
  /** @type {(name: string, href: string) => HTMLAnchorElement} */
  const link = (name, href) => h("a", { href, "aria-current": view === name ? "page" : null }, t(`nav.${name}`));
  return h(
    "header",
    { class: "top" },
    who ? h("a", { href: "#", class: "skip-link", onclick: (/** @type {Event} */ event) => {
      event.preventDefault();
      focusHeading();
    } }, t("nav.skip")) : null,
    h("h1", {}, t("title")),
    who ? h("nav", { class: "views" }, link("faxes", "#/faxes"), link("overview", "#/overview"), link("jobs", "#/jobs"),
      link("audit", "#/audit"), who.role === "admin" ? link("accounts", "#/accounts") : null) : null,
    h("div", { class: "session" },
      languageSwitch(),
      who ? h("span", { class: "who" }, who.email ?? who.user_id, " ",
        h("span", { class: `badge role-${who.role}` }, t(`session.role.${who.role}`))) : null,
      who ? h("button", { type: "button", class: "sign-out", onclick: () => session.signOut() }, t("session.signOut")) : null),
  );
}

function signInView() {
  const email = h("input", { type: "email", name: "email", autocomplete: "username", required: true });
  const password = h("input", { type: "password", name: "password", autocomplete: "current-password", required: true });
  const status = h("div", { class: "sign-in-status", "aria-live": "assertive" },
    signedOutMessage ? notice(t(signedOutMessage), "warning") : null);
  const button = h("button", { type: "submit", class: "primary" }, t("signIn.submit"));
  const forgot = h("button", { type: "button", class: "link-button" }, t("signIn.forgot"));
  forgot.addEventListener("click", () => showRecovery(email.value.trim()));
  const form = h("form", { class: "sign-in" }, h("h2", {}, t("signIn.heading")),
    h("label", {}, t("signIn.email"), email), h("label", {}, t("signIn.password"), password), button, status,
    h("p", {}, forgot));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    replace(status, notice(t("signIn.working")));
    try {
      await session.signIn(email.value.trim(), password.value);
      signedOutMessage = null;
      await start();
    } catch (error) {
      // Auth's own answer, as text (a wrong password: "Invalid login credentials"); nothing else.
      const text = error instanceof session.AuthRefused ? authRefusal(error) : t("signIn.unreachable");
      replace(status, notice(text, "error"));
      button.disabled = false;
    }
  });
  return form;
}

function showSignIn() {
  setOperator(null);
  replace(root, header(null), h("main", {}, signInView()));
}

/**
 * Auth's refusal as text: its explanation when the screen has one, else Auth's own message.
 * @param {unknown} error
 * @param {string} fallback the key of the message that quotes Auth's
 */
function authText(error, fallback) {
  if (!(error instanceof session.AuthRefused)) return t("signIn.unreachable");
  const said = authRefusal(error);
  return said === t("signIn.refused", { message: error.message }) ? t(fallback, { message: error.message }) : said;
}

/**
 * 「パスワードをお忘れですか」: Auth e-mails a link back to this page (resetPasswordForEmail). The
 * page says the same whether or not the address has an account, as Auth does.
 * @param {string} prefill the e-mail the sign-in form held
 */
function showRecovery(prefill) {
  setOperator(null);
  const email = h("input", { type: "email", name: "email", autocomplete: "username", required: true, value: prefill });
  const status = h("div", { class: "sign-in-status", "aria-live": "polite" });
  const button = h("button", { type: "submit", class: "primary" }, t("recovery.submit"));
  const back = h("button", { type: "button", class: "link-button" }, t("recovery.back"));
  back.addEventListener("click", () => showSignIn());
  const form = h("form", { class: "sign-in recovery" }, h("h2", {}, t("recovery.heading")), h("p", {}, t("recovery.explain")),
    h("label", {}, t("signIn.email"), email), button, status, h("p", {}, back));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    replace(status, notice(t("recovery.working")));
    try {
      await session.requestRecovery(email.value.trim(), `${location.origin}${location.pathname}`);
      replace(status, notice(t("recovery.sent", { email: email.value.trim() }), "success"));
    } catch (error) {
      replace(status, notice(authText(error, "recovery.refused"), "error"));
    } finally {
      button.disabled = false;
    }
  });
  replace(root, header(null), h("main", {}, form));
  focusHeading();
}

/**
 * Signed in by an e-mailed link: the operator chooses a password (updateUser), then the screen opens.
 * @param {boolean} invited an invitation's link (a first password), else a recovery's
 */
function showNewPassword(invited) {
  const first = h("input", { type: "password", name: "new-password", autocomplete: "new-password", required: true });
  const again = h("input", { type: "password", name: "new-password-again", autocomplete: "new-password", required: true });
  const status = h("div", { class: "sign-in-status", "aria-live": "assertive" });
  const button = h("button", { type: "submit", class: "primary" }, t("password.submit"));
  const form = h("form", { class: "sign-in new-password" },
    h("h2", {}, t(invited ? "password.headingInvite" : "password.heading")),
    h("label", {}, t("password.new"), first), h("label", {}, t("password.again"), again), button, status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (first.value !== again.value) {
      replace(status, notice(t("password.differ"), "error"));
      return;
    }
    button.disabled = true;
    replace(status, notice(t("password.working")));
    try {
      await session.setPassword(first.value);
    } catch (error) {
      replace(status, notice(authText(error, "password.refused"), "error"));
      button.disabled = false;
      return;
    }
    await start();
    root.querySelector("main")?.prepend(notice(t("password.saved"), "success"));
  });
  replace(root, header(null), h("main", {}, form));
  focusHeading();
}

/**
 * What an e-mailed link brought in the fragment (Auth's /verify: the session, or an error), taken
 * out of the address and the history at once; null when the fragment is the page's own route.
 */
function linkFromUrl() {
  const fragment = location.hash.replace(/^#/, "");
  if (!fragment || fragment.startsWith("/")) return null;
  const params = new URLSearchParams(fragment);
  if (!params.has("access_token") && !params.has("error_code")) return null;
  history.replaceState(null, "", `${location.pathname}${location.search}`);
  return params;
}

/**
 * The view's heading takes the focus (the jobs view's is its results'), so that a keyboard or a
 * screen reader starts where the view does, not at the top of a page that was replaced.
 */
function focusHeading() {
  const heading = root.querySelector("main h2");
  if (!(heading instanceof HTMLElement)) return;
  heading.tabIndex = -1;
  heading.focus();
}

async function route() {
  const mine = ++routes;
  if (!operator()) {
    showSignIn();
    return;
  }
  const [path, query = ""] = (location.hash.replace(/^#/, "") || "/faxes").split("?");
  const params = new URLSearchParams(query);
  const parts = path.split("/").filter(Boolean);
  const admin = operator()?.role === "admin";
  const view = ["jobs", "audit", "overview", ...(admin ? ["accounts"] : [])].includes(parts[0]) ? parts[0] : "faxes";
  const main = h("main", {});
  replace(root, header(view), main);
  if (view === "faxes" && parts[1]) await fax.render(main, parts[1]);
  else if (view === "faxes") await inbox.render(main, params);
  else if (parts[0] === "jobs" && parts[1]) await job.render(main, parts[1]);
  else if (view === "jobs") await jobs.render(main, params);
  else if (view === "audit") await audit.render(main, params);
  else if (view === "overview") await overview.render(main, params);
  else if (view === "accounts") await accounts.render(main);
  // A view still loading when the address changed must not take the focus from the one that followed.
  if (mine === routes) focusHeading();
}

async function start() {
  try {
    setOperator(/** @type {Operator} */ (await api("me")));
  } catch (error) {
    if (!(await session.current())) {
      showSignIn();
      return;
    }
    replace(root, header(null), h("main", {}, notice(problemText(error), "error")));
    return;
  }
  await route();
}

session.watch(
  () => {},
  (reason) => {
    signedOutMessage = reason;
    showSignIn();
  },
);
window.addEventListener("hashchange", () => route());
document.title = t("title");
const link = linkFromUrl();
const linkType = link?.get("type") ?? "";
if (link?.get("access_token") && (linkType === "recovery" || linkType === "invite")) {
  session.sessionFromLink(link.get("access_token") ?? "", link.get("refresh_token") ?? "").then(
    () => showNewPassword(linkType === "invite"),
    () => {
      signedOutMessage = "recovery.linkInvalid";
      showSignIn();
    },
  );
} else {
  if (link) signedOutMessage = "recovery.linkInvalid"; // Auth's error (otp_expired): the link is spent
  session.current().then((signedIn) => (signedIn ? start() : showSignIn()));
}
