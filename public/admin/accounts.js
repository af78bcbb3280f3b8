// @ts-check
// An admin's accounts view (#/accounts): invite someone, and send a forgotten password's reset
// e-mail. Both are Supabase Auth's own e-mails, sent by the server with its key
// (POST /api/admin/operators/invite and /reset-password); nobody learns anyone's password. Taking
// access away is the CLI's `operators remove`, which the view names.

import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { t } from "./i18n.js";
import { notice, problemText } from "./ui.js";

const ROLES = ["clerk", "viewer", "admin"];

/** Where Auth's links return: this page, whatever the fragment. */
function screenUrl() {
  return `${location.origin}${location.pathname}`;
}

/**
 * A form of the view: its fields, a submit button, and the place its outcome is said.
 * @param {string} heading the key of its heading
 * @param {string} explain the key of its explanation
 * @param {HTMLElement[]} fields
 * @param {string} submit the key of its button
 * @param {() => Promise<string>} send what the button does: the outcome's text
 */
function accountForm(heading, explain, fields, submit, send) {
  const status = h("div", { class: "account-status", "aria-live": "polite" });
  const button = h("button", { type: "submit", class: "primary" }, t(submit));
  const form = h("form", { class: "account-form" }, h("h3", {}, t(heading)), h("p", {}, t(explain)), ...fields,
    button, status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    replace(status, notice(t("accounts.working")));
    try {
      replace(status, notice(await send(), "success"));
      form.reset();
    } catch (error) {
      replace(status, notice(problemText(error), "error"));
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

/** @param {Element} container */
export async function render(container) {
  const inviteEmail = h("input", { type: "email", name: "email", autocomplete: "off", required: true });
  const role = h("select", { name: "role" },
    ROLES.map((name) => h("option", { value: name }, t(`session.role.${name}`))));
  const resetEmail = h("input", { type: "email", name: "email", autocomplete: "off", required: true });
  const invite = accountForm("accounts.inviteHeading", "accounts.inviteExplain",
    [h("label", {}, t("accounts.email"), inviteEmail), h("label", {}, t("accounts.role"), role)], "accounts.invite",
    async () => {
      const body = { email: inviteEmail.value.trim(), role: role.value, redirect_to: screenUrl() };
      const done = /** @type {{ email: string, role: string }} */ (await api("operators/invite", { method: "POST", body }));
      return t("accounts.invited", { email: done.email, role: t(`session.role.${done.role}`) });
    });
  const reset = accountForm("accounts.resetHeading", "accounts.resetExplain",
    [h("label", {}, t("accounts.email"), resetEmail)], "accounts.reset",
    async () => {
      const body = { email: resetEmail.value.trim(), redirect_to: screenUrl() };
      const done = /** @type {{ email: string }} */ (await api("operators/reset-password", { method: "POST", body }));
      return t("accounts.resetSent", { email: done.email });
    });
  replace(container, h("div", { class: "accounts-view" }, h("h2", {}, t("accounts.heading")), invite, reset,
    h("p", { class: "hint" }, t("accounts.deactivate"))));
}
