// @ts-check
// Overview: jobs by state, the oldest waiting job, failures by error code, the hourly charts, and
// the health check's open outages.

import { api } from "./api.js";
import { latencyLines, outcomeBars } from "./charts.js";
import { h, replace } from "./dom.js";
import { dateTime, duration, number, t } from "./i18n.js";
import { codeMeaning, explanation, jobLink, notice, problemText, stackedTable, stateBadge } from "./ui.js";

/** @typedef {"queued" | "running" | "failed" | "completed"} State */
/**
 * GET /api/admin/overview (the fields shown).
 * @typedef {object} Overview
 * @property {Record<State, number> & { completed_estimated: boolean, failed_closed?: number }} states jobs by
 *   state; completed may be estimated; failed counts open problems, failed_closed the failed jobs whose fax is done
 * @property {{ id: string, status: string, waiting_seconds: number } | null} oldest_waiting
 * @property {Array<{ cause: string, since: string, details?: OutageDetails | null }>} outages the health
 *   check's open ones, with what there is to show of reconciliation's (outage_details in the migrations)
 * @property {Array<{ error_code: string, failed: number, retried: number, released: number, other: number }>} failures_24h
 *   attempts that did not complete in the last 24 hours, by error code
 * @property {Array<{ error_code: string, count: number }>} failed_by_error_code failed jobs now
 * @property {import("./charts.js").Hour[]} hours the last 7 days' hours
 */

/**
 * @param {Record<string, string>} params the list's filter
 * @param {string} text
 */
function jobsLink(params, text) {
  return h("a", { href: `#/jobs?${new URLSearchParams(params)}` }, text);
}

/** @param {Overview["states"]} states */
function stateCards(states) {
  /** @type {State[]} */
  const shown = ["queued", "running", "failed", "completed"];
  const cards = shown.map((state) => {
    const estimated = state === "completed" && states.completed_estimated;
    return h(
      "li",
      { class: `card state-${state}` },
      h("a", { href: `#/jobs?state=${state}` }, stateBadge(state)),
      h("strong", { class: "count" }, `${estimated ? "≈ " : ""}${number(states[state] ?? 0)}`),
      estimated ? h("small", {}, `(${t("common.estimate")})`) : null,
    );
  });
  return h("section", {}, h("h2", {}, t("overview.states")), h("ul", { class: "cards" }, cards),
    states.failed_closed ? h("p", { class: "hint failed-closed" }, t("overview.failedClosed", { count: number(states.failed_closed) })) : null,
    states.completed_estimated ? h("p", { class: "hint" }, t("overview.completedEstimate")) : null);
}

/** @param {Overview["oldest_waiting"]} oldest */
function oldestWaiting(oldest) {
  return h(
    "section",
    {},
    h("h2", {}, t("overview.oldestWaiting")),
    oldest
      ? h("p", {}, jobLink(oldest.id), " ", stateBadge(oldest.status), " ",
          t("overview.waitingFor", { duration: duration(Number(oldest.waiting_seconds)) }))
      : h("p", {}, t("overview.nothingWaiting")),
  );
}

/**
 * @typedef {object} UnreadableEmail an item of Resend's list that reconciliation could not read
 * @property {string} reason why, in the worker's fixed words
 * @property {Record<string, string | string[] | null>} item what could be read of it, as listed
 * @property {string} first_listed_at
 */
/**
 * @typedef {object} OutageDetails
 * @property {UnreadableEmail[]} [emails] reconciliation_unreadable: the newest ones
 * @property {number} [count] reconciliation_unreadable: how many are open
 * @property {string} [watermark] retention_window_closing: listed up to
 * @property {string} [unrecoverable_from] retention_window_closing
 * @property {string} [command] retention_window_closing: the run by hand that lists the gap
 * @property {string} [last_completed_at] reconciliation_stalled
 * @property {string | null} [last_finding] reconciliation_stalled
 */

const UNREADABLE_FIELDS = ["id", "created_at", "from", "to", "subject", "message_id", "files"];

/** @param {UnreadableEmail} email one line per field that could be read (sender's text as text) */
function unreadableEmail(email) {
  const reason = t(`unreadable.reason.${email.reason}`);
  const fields = UNREADABLE_FIELDS.filter((name) => email.item[name] != null).map((name) => {
    const value = email.item[name];
    return h("div", {}, `${t(`unreadable.field.${name}`)}: `,
      h("span", { class: "listed" }, Array.isArray(value) ? value.filter((v) => v != null).join(", ") : String(value)));
  });
  return h("li", { class: "unreadable" },
    h("div", {}, reason.startsWith("unreadable.") ? email.reason : reason, " · ",
      t("overview.firstListed", { time: dateTime(email.first_listed_at) })), ...fields);
}

/** @param {{ cause: string, details?: OutageDetails | null }} outage what reconciliation's outages show */
function outageDetails(outage) {
  const d = outage.details;
  if (!d) return null;
  if (outage.cause === "reconciliation_unreadable" && d.emails) {
    return h("div", { class: "details" }, t("overview.unreadableCount", { count: number(d.count ?? d.emails.length) }),
      h("ul", {}, d.emails.map(unreadableEmail)));
  }
  if (outage.cause === "retention_window_closing" && d.watermark && d.unrecoverable_from) {
    return h("div", { class: "details" },
      t("overview.listedUpTo", { time: dateTime(d.watermark), until: dateTime(d.unrecoverable_from) }), " ",
      h("samp", {}, d.command ?? ""));
  }
  if (outage.cause === "reconciliation_stalled") {
    return h("div", { class: "details" },
      d.last_completed_at ? h("div", {}, t("overview.lastComplete", { time: dateTime(d.last_completed_at) })) : null,
      d.last_finding ? h("div", {}, t("overview.lastFinding"), " ", h("samp", {}, d.last_finding)) : null);
  }
  return null;
}

/** @param {Overview["outages"]} list */
function outages(list) {
  return h(
    "section",
    {},
    h("h2", {}, t("overview.outages")),
    list.length
      ? h("ul", { class: "outages" }, list.map((o) => h("li", { class: "outage", "data-cause": o.cause },
          explanation("outage", o.cause), h("div", { class: "since" }, t("overview.since", { time: dateTime(o.since) })),
          outageDetails(o))))
      : h("p", {}, t("overview.noOutages")),
  );
}

/** @param {Overview} data */
function failureTables(data) {
  /** @type {(...cells: string[]) => HTMLTableSectionElement} */
  const head = (...cells) => h("thead", {}, h("tr", {}, cells.map((c) => h("th", { scope: "col" }, c))));
  const last24 = data.failures_24h.length
    ? stackedTable(h("table", {}, head(t("column.errorCode"), t("column.failed"), t("column.retried"), t("column.released"), t("column.other")),
        h("tbody", {}, data.failures_24h.map((f) => h("tr", {},
          h("td", {}, codeMeaning("job", f.error_code)),
          ...[f.failed, f.retried, f.released, f.other].map((n) => h("td", { class: "number" }, number(n))))))))
    : h("p", {}, t("overview.noFailures"));
  const now = data.failed_by_error_code.length
    ? stackedTable(h("table", {}, head(t("column.errorCode"), t("column.count"), t("overview.actions")),
        h("tbody", {}, data.failed_by_error_code.map((f) => h("tr", {},
          h("td", {}, codeMeaning("job", f.error_code)),
          h("td", { class: "number" }, number(f.count)),
          h("td", {}, jobsLink({ state: "failed", code: f.error_code }, t("overview.showJobs"))))))))
    : h("p", {}, t("overview.noFailures"));
  return [
    h("section", {}, h("h2", {}, t("overview.failedNow")), now),
    h("section", {}, h("h2", {}, t("overview.failures24h")), last24),
  ];
}

/**
 * @param {import("./charts.js").Hour[]} hours
 * @param {"24h" | "7d"} range
 */
function charts(hours, range) {
  const shown = range === "7d" ? hours : hours.slice(-24);
  const withDay = range === "7d";
  const formatMs = (/** @type {number} */ ms) => duration(ms / 1000);
  return [
    outcomeBars(shown, withDay, `${t("overview.perHour")} (${t(range === "7d" ? "overview.range7d" : "overview.range24h")})`),
    latencyLines(shown, withDay, `${t("overview.latency")} (${t(range === "7d" ? "overview.range7d" : "overview.range24h")})`, formatMs),
  ];
}

/**
 * @param {Element} container
 * @param {URLSearchParams} params
 */
export async function render(container, params) {
  replace(container, notice(t("common.loading")));
  /** @type {Overview} */
  let data;
  try {
    data = /** @type {Overview} */ (await api("overview"));
  } catch (error) {
    replace(container, notice(problemText(error), "error"));
    return;
  }
  const range = params.get("range") === "7d" ? "7d" : "24h";
  const rangeSwitch = h(
    "nav",
    { class: "tabs", "aria-label": t("overview.perHour") },
    ["24h", "7d"].map((r) => h("a", { href: `#/overview?range=${r}`, "aria-current": r === range ? "page" : null },
      t(r === "7d" ? "overview.range7d" : "overview.range24h"))),
  );
  replace(
    container,
    h("div", { class: "overview" },
      stateCards(data.states),
      h("div", { class: "columns" }, oldestWaiting(data.oldest_waiting), outages(data.outages)),
      h("section", {}, rangeSwitch, h("div", { class: "columns charts" }, charts(data.hours, range))),
      h("div", { class: "columns" }, failureTables(data))),
  );
}
