// @ts-check
// Pieces every view uses: state badges, notices, links, the operator, and refusals shown as text.

import { ApiError } from "./api.js";
import { h } from "./dom.js";
import { dateTime, has, t } from "./i18n.js";

/** @typedef {import("./dom.js").Child} Child */
/** @typedef {import("./dom.js").Piece} Piece */
/**
 * The operator signed in (GET /api/admin/me).
 * @typedef {object} Operator
 * @property {string} user_id
 * @property {string | null} email
 * @property {"admin" | "viewer"} role
 * @property {string[]} kinds the jobs' kinds, for the filter
 * @property {string[]} error_codes every error code a job can end with, for the filter
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

/** @param {string} state */
export function stateBadge(state) {
  return h("span", { class: `badge state-${state}` }, t(`state.${state}`));
}

/**
 * @param {string} id
 * @param {string} [text] the start of the id unless given
 */
export function jobLink(id, text) {
  return h("a", { href: `#/jobs/${encodeURIComponent(id)}`, class: "mono" }, text ?? id.slice(0, 8));
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
    if (error.code === "not_admin") return t("common.notAdmin");
    return t("common.error", { message: error.message || String(error.code) });
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
  received_to: "filter.receivedTo", q: "filter.q",
});

/**
 * A filter (as the database normalized it) in words: "State: Failed; Error code: resend_not_found".
 * @param {Record<string, string | string[]> | null | undefined} filter
 */
export function filterSummary(filter) {
  return Object.entries(filter ?? {}).map(([key, value]) => {
    const values = Array.isArray(value) ? value : [value];
    const shown = values.map((v) => key === "states" ? t(`state.${v}`)
      : key === "received_from" || key === "received_to" ? dateTime(v) : v);
    return `${FILTER_LABELS[key] ? t(FILTER_LABELS[key]) : key}: ${shown.join(", ")}`;
  }).join("; ");
}

/**
 * Auth's refusal of a sign-in, in the page's language by its error code; Auth's own words (English)
 * only for a code the page does not know.
 * @param {{ code?: string, message: string }} error
 */
export function authRefusal(error) {
  if (error.code && has(`auth.${error.code}`)) return t(`auth.${error.code}`);
  return t("signIn.refused", { message: error.message });
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
