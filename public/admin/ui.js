// @ts-check
// Pieces every view uses: state badges, notices, links, the operator, and refusals shown as text.

import { ApiError } from "./api.js";
import { h } from "./dom.js";
import { EXPLANATIONS } from "./explanations.js";
import { dateTime, language, t } from "./i18n.js";

/** @typedef {import("./dom.js").Child} Child */
/** @typedef {import("./dom.js").Piece} Piece */
/**
 * The operator signed in (GET /api/admin/me).
 * @typedef {object} Operator
 * @property {string} user_id
 * @property {string | null} email
 * @property {"admin" | "clerk" | "viewer"} role admin: everything; clerk: reads and marks faxes; viewer: reads
 * @property {string[]} kinds the jobs' kinds, for the filter
 * @property {string[]} error_codes every error code a job can end with, for the filter
 * @property {string} time_zone the office's time zone (office_settings.time_zone), an IANA name
 */

/** @type {Operator | null} */
let who = null;

/** @param {Operator | null} operator */
export function setOperator(operator) {
  who = operator;
}

export function operator() {
  return who;
}

export function isAdmin() {
  return who?.role === "admin";
}

/** Whether the operator may mark who is dealing with a fax: a clerk or an admin. */
export function canMark() {
  return who?.role === "admin" || who?.role === "clerk";
}

/**
 * Whether the advice for a job's error code says a retry cannot help (lib/failures.py
 * Rule.retry_helps): the screen then offers no retry for it.
 * @param {string | null | undefined} code
 */
export function retryCannotHelp(code) {
  return Boolean(code && Object.hasOwn(EXPLANATIONS.job, code) && EXPLANATIONS.job[code].retry === false);
}

/** @param {string} state */
export function stateBadge(state) {
  return h("span", { class: `badge state-${state}` }, t(`state.${state}`));
}

/**
 * The short id the screen shows (and the CLI's list, lib/admin/commands.py SHORT_ID): a prefix
 * that the search and every CLI command take.
 * @param {string} id
 */
export function shortId(id) {
  return id.slice(0, 8);
}

/**
 * @param {string} id
 * @param {string} [text] the short id unless given
 */
export function jobLink(id, text) {
  return h("a", { href: `#/jobs/${encodeURIComponent(id)}`, class: text === undefined ? "mono" : null }, text ?? shortId(id));
}

/**
 * @param {Child} text
 * @param {"info" | "success" | "warning" | "error"} [kind]
 */
export function notice(text, kind = "info") {
  return h("p", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}

/**
 * What a failed call says to the operator: the server's refusal as text, or that it was unreachable.
 * @param {unknown} error
 */
export function problemText(error) {
  if (error instanceof ApiError) {
    const said = explained("refusal", String(error.code));
    // The server's own message is English: shown on the English screen, where it says which part.
    const operator = said ? operatorAdvice(said) : null;
    if (said) return [sentence(said.meaning), " ", said.clerk, operator ? ` ${t("explain.operatorAdvice")} ${operator}` : null,
      " ", h("code", { class: "mono" }, String(error.code)), language() === "en" && error.message ? ` (${error.message})` : null];
    return t("common.error", { message: String(error.code) });
  }
  return t("common.network");
}

/**
 * A sender's (or provider's) text, bidi-isolated: a right-to-left override inside it cannot reorder
 * what follows it on the page. Null for no text, so that definitions() leaves the row out.
 * @param {string | null | undefined} text
 * @param {string} [className]
 */
export function isolated(text, className) {
  return text ? h("bdi", { dir: "auto", class: className }, text) : null;
}

/** The filter keys of document_jobs_internal.job_filter, and their labels. */
const FILTER_LABELS = /** @type {Record<string, string>} */ ({
  states: "column.state", kind: "column.kind", error_code: "column.errorCode", received_from: "jobs.filterFrom",
  received_to: "filter.receivedTo", sender: "filter.sender", q: "filter.q",
  // The inbox's (a bulk mark done counted with it).
  number: "inbox.filterSender", line: "inbox.filterLine", handling: "inbox.filterHandling", assignee: "filter.assignee",
});

/**
 * A filter (as the database normalized it) in words: "State: Failed; Error code: resend_not_found".
 * @param {Record<string, string | string[]> | null | undefined} filter
 */
export function filterSummary(filter) {
  return Object.entries(filter ?? {}).map(([key, value]) => {
    if (key === "fax_jobs_only") return t("filter.faxJobsOnly");
    const values = Array.isArray(value) ? value : [value];
    const shown = values.map((v) => key === "states" ? t(`state.${v}`)
      : key === "handling" ? t(`handling.${v}`)
      : key === "received_from" || key === "received_to" ? dateTime(v)
      : key === "error_code" && explained("job", v) ? `${v} (${explained("job", v)?.meaning})` : v);
    return `${FILTER_LABELS[key] ? t(FILTER_LABELS[key]) : key}: ${shown.join(", ")}`;
  }).join("; ");
}

/**
 * Auth's refusal of a sign-in, in the page's language by its error code (GoTrue's `code`); Auth's
 * own words (English), labelled as Auth's, only for a code the page does not know.
 * @param {{ code?: string, message: string }} error
 */
export function authRefusal(error) {
  const said = error.code ? explained("auth", error.code) : null;
  if (said) return `${sentence(said.meaning)} ${said.clerk}`; // before sign-in, no one is an admin
  return t("signIn.refused", { message: error.message });
}

/** @typedef {keyof typeof EXPLANATIONS} Group job errors, outages, the API's refusals, Auth's */

/**
 * What a code means and what to do, in the page's language (lib/failures.py, lib/explanations.py).
 * @param {Group} group
 * @param {string} code
 * @returns {import("./explanations.js").Said | null}
 */
export function explained(group, code) {
  const entry = Object.hasOwn(EXPLANATIONS[group], code) ? EXPLANATIONS[group][code] : null;
  return entry ? (language() === "ja" ? entry.ja : entry.en) : null;
}

/**
 * The operator's advice (the engineer's steps: settings, redeploys, Vault, SQL), for an admin only,
 * where it says more than the clerk's advice that everyone reads.
 * @param {import("./explanations.js").Said} said
 * @returns {string | null}
 */
function operatorAdvice(said) {
  return isAdmin() && said.operator !== undefined ? said.operator : null;
}

/**
 * A meaning as a sentence: the table's English meanings start in lower case and have no full stop.
 * @param {string} text
 */
function sentence(text) {
  const capital = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.。)）]$/.test(capital) ? capital : `${capital}.`;
}

/**
 * A code beside its meaning.
 * @param {Group} group
 * @param {string} code
 */
export function codeMeaning(group, code) {
  const said = explained(group, code);
  return h("span", { class: "code-meaning" }, h("code", { class: "mono" }, code), said ? ` ${sentence(said.meaning)}` : null);
}

/**
 * A code, what it means, what to do (the clerk's advice; an admin also reads the operator's), and
 * the message recorded with it, labelled by who wrote it (the provider's words stay as they came).
 * @param {Group} group
 * @param {string} code
 * @param {object} [more]
 * @param {string | null} [more.message] the message recorded with the code
 * @param {boolean} [more.advice] whether to say what to do
 */
export function explanation(group, code, { message = null, advice = true } = {}) {
  const said = explained(group, code);
  const operator = said && advice ? operatorAdvice(said) : null;
  const source = (Object.hasOwn(EXPLANATIONS[group], code) && EXPLANATIONS[group][code].source) || "worker";
  return h("div", { class: "explanation", "data-code": code },
    h("div", { class: "meaning" }, h("code", { class: "mono" }, code), " ", said ? sentence(said.meaning) : t("explain.unknown")),
    said && advice ? h("div", { class: "advice" }, h("strong", {}, t("explain.advice")), " ", said.clerk) : null,
    operator ? h("div", { class: "operator-advice" }, h("strong", {}, t("explain.operatorAdvice")), " ", operator) : null,
    message ? h("div", { class: "message" }, t(`source.${source}`), " ", isolated(message)) : null);
}

/**
 * A table that becomes a card per row on a phone (admin.css, table.stack): each cell is labelled
 * with its column's header, which the card shows before it.
 * @param {HTMLTableElement} table
 */
export function stackedTable(table) {
  table.classList.add("stack");
  const labels = [...table.querySelectorAll("thead th")].map((th) => th.textContent ?? "");
  for (const row of table.querySelectorAll("tbody tr")) {
    [...row.children].forEach((cell, index) => cell.setAttribute("data-label", labels[index] ?? ""));
  }
  return table;
}

/**
 * Terms and their values; a row whose value is null, undefined or "" is left out.
 * @param {Array<[string, Child]>} rows
 */
export function definitions(rows) {
  return h(
    "dl",
    { class: "facts" },
    rows.filter(([, value]) => value !== null && value !== undefined && value !== "").flatMap(([term, value]) => [
      h("dt", {}, term),
      h("dd", {}, value),
    ]),
  );
}

/**
 * A modal dialog; resolves with the reason typed (or true without a reason field), null when dismissed.
 * @param {object} question
 * @param {string} question.title
 * @param {Piece[]} [question.body]
 * @param {string | null} [question.reasonLabel] a reason field, with this label
 * @param {boolean} [question.reasonRequired]
 * @param {string} [question.confirm] the confirming button's label
 * @returns {Promise<string | true | null>}
 */
export function ask({ title, body = [], reasonLabel = null, reasonRequired = false, confirm }) {
  return new Promise((resolve) => {
    const reason = reasonLabel ? h("textarea", { rows: 3, maxlength: 500, required: reasonRequired, name: "reason" }) : null;
    const dialog = h(
      "dialog",
      { class: "ask" },
      h(
        "form",
        { method: "dialog" },
        h("h2", {}, title),
        body,
        reason ? h("label", {}, reasonLabel, reason) : null,
        h(
          "div",
          { class: "buttons" },
          h("button", { value: "cancel", type: "submit", formnovalidate: true }, t("common.cancel")),
          h("button", { value: "confirm", type: "submit", class: "primary" }, confirm ?? t("common.confirm")),
        ),
      ),
    );
    dialog.addEventListener("close", () => {
      const confirmed = dialog.returnValue === "confirm";
      dialog.remove();
      resolve(confirmed ? (reason ? reason.value.trim() : true) : null);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
