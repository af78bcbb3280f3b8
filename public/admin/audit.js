// @ts-check
// The audit: every operator action, newest first.

import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { dateTime, number, t } from "./i18n.js";
import { handlingLabel } from "./handling.js";
import { filterSummary, jobLink, notice, problemText, shortId, stackedTable } from "./ui.js";

/**
 * An operator's action (GET /api/admin/audit).
 * @typedef {object} AuditEntry
 * @property {number} id
 * @property {string} at
 * @property {string | null} actor_id null: retry_document_job's caller, the service key, which names nobody
 * @property {string | null} actor_email
 * @property {string} action
 * @property {number} job_count
 * @property {string | null} job_id the job acted on; none for a bulk action
 * @property {Record<string, string | string[]> | null} filter a bulk action's filter
 * @property {string | null} reason
 * @property {{ changed: number, skipped: number, done: boolean } | null} bulk a bulk action's progress
 * @property {{ fax_received_email_id: string, from: HandlingState, to: HandlingState, to_assignee_email: string | null } | null} [handling]
 *   a mark of a fax: which, and from which state to which
 */
/** @typedef {import("./handling.js").HandlingState} HandlingState */
/** @typedef {{ entries: AuditEntry[], next: number | null }} AuditPage next: the `before` of the older page */

/** @param {AuditEntry} entry */
function target(entry) {
  if (entry.job_id) return jobLink(entry.job_id);
  // The fax's page (the inbox's), by its e-mail's id.
  if (entry.handling) {
    const id = entry.handling.fax_received_email_id;
    return h("a", { href: `#/faxes/${encodeURIComponent(id)}` }, t("audit.fax", { id: shortId(id) }));
  }
  return h("span", {}, filterSummary(entry.filter) || "—");
}

/** @param {AuditEntry} entry */
function result(entry) {
  if (entry.handling) {
    const { from, to, to_assignee_email: who } = entry.handling;
    return `${handlingLabel(from)} → ${handlingLabel(to)}${who && to !== "new" ? ` (${who})` : ""}`;
  }
  if (!entry.bulk) return "";
  const counts = t("audit.bulkResult", { changed: number(entry.bulk.changed), skipped: number(entry.bulk.skipped) });
  return entry.bulk.done ? counts : `${counts} (${t("audit.running")})`;
}

/**
 * @param {Element} container
 * @param {URLSearchParams} params
 */
export async function render(container, params) {
  replace(container, notice(t("common.loading")));
  const before = params.get("before");
  /** @type {AuditPage} */
  let page;
  try {
    page = /** @type {AuditPage} */ (await api(`audit${before ? `?before=${encodeURIComponent(before)}` : ""}`));
  } catch (error) {
    replace(container, notice(problemText(error), "error"));
    return;
  }
  const head = ["audit.when", "audit.who", "audit.what", "audit.jobs", "audit.target", "audit.reason", "audit.result"];
  replace(
    container,
    h("div", { class: "audit-view" },
      h("h2", {}, t("audit.heading")),
      page.entries.length
        ? stackedTable(h("table", { class: "audit" },
            h("thead", {}, h("tr", {}, head.map((k) => h("th", { scope: "col" }, t(k))))),
            h("tbody", {}, page.entries.map((e) => h("tr", { "data-audit-id": e.id },
              h("td", { class: "nowrap" }, dateTime(e.at)),
              h("td", {}, e.actor_id
                ? [h("div", {}, e.actor_email ?? ""), h("small", { class: "mono" }, e.actor_id)]
                : h("div", {}, t("audit.service"))),
              h("td", {}, t(`action.${e.action}`)),
              h("td", { class: "number" }, number(e.job_count)),
              h("td", {}, target(e)),
              h("td", { class: "reason" }, e.reason ?? ""),
              h("td", {}, result(e)))))))
        : notice(t("audit.none")),
      h("div", { class: "pager" },
        before ? h("a", { href: "#/audit" }, t("common.newer")) : null,
        page.next ? h("a", { href: `#/audit?before=${encodeURIComponent(page.next)}` }, t("common.older")) : null)),
  );
}
