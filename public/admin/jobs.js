// @ts-check
// Jobs: filters (state, kind, error code, received time, search) kept in the URL, keyset pages,
// auto-refresh that pauses, and the bulk actions on everything the filter matches. The queue's own
// jobs (reconciliation's, of no e-mail) are left out unless asked for (queue_jobs=show) or their
// kind is chosen.

import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { markAllDone } from "./handling.js";
import { absoluteTime, dateTime, number, t } from "./i18n.js";
import { ask, canMark, codeMeaning, explained, filterSummary, isAdmin, isolated, jobLink, notice, operator, problemText, retryCannotHelp, shortId, stateBadge } from "./ui.js";

const STATES = ["queued", "running", "failed", "completed"];
const FILTER_KEYS = ["state", "kind", "code", "from", "to", "sender", "q", "queue_jobs"];
const REFRESH_MS = 10000;
const AUTO_REFRESH_KEY = "document-jobs-admin-auto-refresh";
const PHONE_QUERY = "(max-width: 700px)"; // admin.css's breakpoint for cards

/** @typedef {{ created_at: string, id: string }} Cursor the last job of the page before: the keyset */
/** @typedef {import("./job.js").Job & { email: { from: string | null, subject: string | null } | null }} JobRow */
/**
 * GET /api/admin/jobs: a page of the list.
 * @typedef {object} JobsPage
 * @property {JobRow[]} jobs
 * @property {number | null} count how many match, when counted
 * @property {boolean} count_capped more match than were counted
 * @property {boolean} partial the search stopped before the end; it reached back to searched_until
 * @property {string | null} searched_until
 * @property {Cursor | null} next the older page's
 */
/**
 * POST /api/admin/bulk: what a bulk action would change.
 * @typedef {{ bulk_action_id: string, job_count: number, filter: Record<string, string | string[]>, cancelled_left_out: boolean }} BulkPrepared
 */
/**
 * POST /api/admin/bulk/<id>/apply: the bulk action's progress after one more batch.
 * @typedef {object} BulkProgress
 * @property {number} processed
 * @property {number} changed
 * @property {number} skipped
 * @property {boolean} done
 * @property {number} workers_started
 * @property {Array<{ job_id: string, reason: string }>} not_changed
 */

/** @type {number | undefined} */
let refreshTimer;
/** @type {Array<Cursor | null>} */
let olderStack = []; // cursors of the pages before this one, for "Newer"
let stackFilter = "";

/** @param {URLSearchParams} params */
function filterOf(params) {
  const filter = new URLSearchParams();
  for (const key of FILTER_KEYS) for (const value of params.getAll(key)) if (value) filter.append(key, value);
  return filter;
}

/**
 * The filter as the API takes it: the URL's, and the queue's own jobs left out unless asked for.
 * @param {URLSearchParams} filter
 */
function apiFilter(filter) {
  const query = new URLSearchParams(filter);
  query.delete("queue_jobs");
  if (filter.get("queue_jobs") !== "show" && filter.get("kind") !== "reconcile_emails") query.set("queue_jobs", "hide");
  return query;
}

/**
 * @param {URLSearchParams} filter
 * @param {Cursor | null} [cursor]
 */
function hashFor(filter, cursor) {
  const params = new URLSearchParams(filter);
  if (cursor) {
    params.set("after_time", cursor.created_at);
    params.set("after_id", cursor.id);
  }
  const query = params.toString();
  return `#/jobs${query ? `?${query}` : ""}`;
}

// A date filter is one text field (a datetime-local input is seven tab stops), written as the page
// shows times: "2026-12-01 09:00" in the viewer's zone. The URL keeps ISO 8601 in UTC.
const TYPED_TIME = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;

/** @param {string | null} iso */
function toTypedTime(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  return absoluteTime(date).slice(0, 16);
}

/**
 * The typed time as ISO 8601 (UTC), "" for no time, or null when it is not a time.
 * @param {string} value
 */
function fromTypedTime(value) {
  const text = value.trim();
  if (!text) return "";
  const parts = TYPED_TIME.exec(text);
  if (!parts) return null;
  const [year, month, day, hour, minute, second] = parts.slice(1).map((part) => Number(part ?? 0));
  const date = new Date(year, month - 1, day, hour, minute, second);
  if (date.getMonth() !== month - 1 || date.getDate() !== day || hour > 23 || minute > 59 || second > 59) return null;
  return date.toISOString();
}

/** The viewer's UTC offset now, as times are shown: "+09:00". */
function zoneOffset() {
  return absoluteTime(new Date()).slice(-6);
}

/** @param {URLSearchParams} filter */
function stateTabs(filter) {
  const active = filter.get("state") ?? "";
  /** @type {(state: string, label: string) => HTMLAnchorElement} */
  const tab = (state, label) => {
    const next = new URLSearchParams(filter);
    if (state) next.set("state", state);
    else next.delete("state");
    return h("a", { href: hashFor(next), "aria-current": active === state ? "page" : null }, label);
  };
  return h("nav", { class: "tabs", "aria-label": t("column.state") }, tab("", t("state.all")),
    STATES.map((state) => tab(state, t(`state.${state}`))));
}

/**
 * The filters, folded behind one control (open on a wide screen, closed on a phone, where the list
 * is what the view is for).
 * @param {URLSearchParams} filter
 * @param {string[]} kinds
 * @param {string[]} codes the error codes offered
 */
function filterForm(filter, kinds, codes) {
  const kind = h("select", { name: "kind" }, h("option", { value: "" }, t("jobs.anyKind")),
    kinds.map((k) => h("option", { value: k, selected: filter.get("kind") === k }, k)));
  const code = h("input", { name: "code", list: "error-codes", value: filter.get("code") ?? "", autocomplete: "off", size: 22 });
  /** @param {string} name */
  const time = (name) => h("input", { name, type: "text", inputmode: "numeric", autocomplete: "off", size: 16,
    value: toTypedTime(filter.get(name)), placeholder: "2026-12-01 09:00", "aria-describedby": "time-format" });
  const from = time("from");
  const to = time("to");
  const sender = h("input", { name: "sender", type: "search", value: filter.get("sender") ?? "", autocomplete: "off", size: 24, maxlength: 200 });
  const q = h("input", { name: "q", type: "search", value: filter.get("q") ?? "", placeholder: t("jobs.searchHint"), size: 40, maxlength: 200 });
  const queueJobs = h("input", { name: "queue_jobs", type: "checkbox", checked: filter.get("queue_jobs") === "show" });
  const form = h(
    "form",
    { class: "filters", role: "search" },
    h("label", {}, t("jobs.filterKind"), kind),
    h("label", {}, t("jobs.filterCode"), code),
    h("datalist", { id: "error-codes" }, codes.map((c) => h("option", { value: c, label: explained("job", c)?.meaning ?? c }))),
    h("label", {}, t("jobs.filterFrom"), from),
    h("label", {}, t("jobs.filterTo"), to),
    h("small", { id: "time-format", class: "time-format" }, t("jobs.timeFormat", { offset: zoneOffset() })),
    h("label", {}, t("filter.sender"), sender),
    h("label", { class: "wide" }, t("jobs.search"), q),
    h("label", { class: "auto-refresh" }, queueJobs, " ", t("jobs.queueJobs")),
    h("div", { class: "buttons" },
      h("button", { type: "submit", class: "primary" }, t("jobs.apply")),
      h("button", { type: "button", onclick: () => { location.hash = "#/jobs"; } }, t("jobs.clear"))),
  );
  for (const field of [from, to]) field.addEventListener("input", () => field.setCustomValidity(""));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const times = [from, to].map((field) => {
      const iso = fromTypedTime(field.value);
      field.setCustomValidity(iso === null ? t("jobs.timeInvalid") : "");
      return iso;
    });
    if (!form.reportValidity()) return;
    const next = new URLSearchParams();
    const state = filter.get("state");
    if (state) next.set("state", state);
    for (const [name, value] of [["kind", kind.value], ["code", code.value.trim()], ["from", times[0] ?? ""],
      ["to", times[1] ?? ""], ["sender", sender.value.trim()], ["q", q.value.trim()],
      ["queue_jobs", queueJobs.checked ? "show" : ""]]) {
      if (value) next.set(name, value);
    }
    location.hash = hashFor(next);
  });
  const active = FILTER_KEYS.filter((key) => key !== "state" && filter.get(key)).length;
  return h("details", { class: "filter-fold", open: !matchMedia(PHONE_QUERY).matches },
    h("summary", {}, t("jobs.filters"), active ? ` (${t("jobs.filtersActive", { count: number(active) })})` : null), form);
}

/**
 * The list: a table, cards on a phone (admin.css). A row is one tab stop, the link on its time, and
 * a click anywhere else on it (not on a selection of its text) opens the job too.
 * @param {JobRow[]} jobs
 */
function jobsTable(jobs) {
  const head = ["column.received", "column.state", "column.kind", "column.attempts", "column.error", "column.from",
    "column.subject", "column.job"];
  const body = h("tbody", {}, jobs.map((job) => h("tr", { "data-job-id": job.id },
    h("td", { class: "nowrap received" }, jobLink(job.id, dateTime(job.created_at))),
    h("td", {}, stateBadge(job.status)),
    h("td", { class: "mono" }, job.kind),
    h("td", { class: "number" }, `${job.attempts}/${job.max_attempts}`),
    h("td", { class: "error" }, job.last_error_code ? codeMeaning("job", job.last_error_code) : ""),
    h("td", { class: "sender" }, isolated(job.email?.from ?? "")),
    h("td", { class: "subject" }, isolated(job.email?.subject ?? "")),
    h("td", { class: "mono short-id" }, shortId(job.id)))));
  body.addEventListener("click", (event) => {
    const target = /** @type {Element} */ (event.target);
    if (target.closest("a, button") || String(getSelection() ?? "")) return;
    const row = target.closest("tr[data-job-id]");
    if (row instanceof HTMLElement) location.hash = `#/jobs/${encodeURIComponent(row.dataset.jobId ?? "")}`;
  });
  return h("table", { class: "jobs" }, h("thead", {}, h("tr", {}, head.map((key) => h("th", { scope: "col" }, t(key))))), body);
}

/**
 * @param {URLSearchParams} filter
 * @param {JobsPage} page
 * @param {Cursor | null} cursor this page's
 */
function pager(filter, page, cursor) {
  const newer = h("button", { type: "button", disabled: !cursor, onclick: () => {
    const previous = olderStack.pop();
    location.hash = hashFor(filter, previous ?? null);
  } }, t("common.newer"));
  const older = h("button", { type: "button", disabled: !page.next, onclick: () => {
    olderStack.push(cursor);
    location.hash = hashFor(filter, page.next);
  } }, t("common.older"));
  return h("div", { class: "pager" }, newer, older);
}

/**
 * @param {"retry" | "cancel"} action
 * @param {URLSearchParams} filter
 * @param {Element} report where the action's progress and outcome are told
 * @param {() => unknown} rerender
 */
async function bulk(action, filter, report, rerender) {
  const query = apiFilter(filter).toString();
  replace(report, notice(t("bulk.counting")));
  /** @type {BulkPrepared} */
  let prepared;
  try {
    prepared = /** @type {BulkPrepared} */ (await api("bulk", { method: "POST", body: { action, query } }));
  } catch (error) {
    replace(report, notice(problemText(error), "error"));
    return;
  }
  if (prepared.job_count === 0) {
    replace(report, notice(t("bulk.nothing")));
    return;
  }
  const count = number(prepared.job_count);
  const summary = filterSummary(prepared.filter);
  const reason = await ask({
    title: t(action === "retry" ? "bulk.confirmRetry" : "bulk.confirmCancel", { count }),
    body: [h("p", {}, t("bulk.snapshot")), h("p", { class: "bulk-filter" }, t("bulk.filter", { filter: summary || "—" })),
      prepared.cancelled_left_out ? h("p", { class: "bulk-cancelled" }, t("bulk.cancelledLeftOut")) : null],
    reasonLabel: t("bulk.reason"),
    reasonRequired: true,
  });
  if (reason === null) {
    replace(report);
    return;
  }
  /** @type {BulkProgress} */
  let progress;
  try {
    do {
      progress = /** @type {BulkProgress} */ (await api(`bulk/${prepared.bulk_action_id}/apply`, { method: "POST", body: { reason } }));
      replace(report, notice(t("bulk.applying", { processed: number(progress.processed), count,
        changed: number(progress.changed), skipped: number(progress.skipped) })));
    } while (!progress.done);
  } catch (error) {
    replace(report, notice(problemText(error), "error"));
    return;
  }
  replace(
    report,
    notice(t("bulk.done", { changed: number(progress.changed), count, skipped: number(progress.skipped) }), "success"),
    progress.workers_started > 0 || action === "retry" ? h("p", {}, t("bulk.workers")) : null,
    progress.not_changed.length
      ? h("details", { open: true }, h("summary", {}, t("bulk.notChanged")),
          h("ul", {}, progress.not_changed.map((item) => h("li", {}, jobLink(item.job_id), " — ", codeMeaning("refusal", item.reason)))))
      : null,
  );
  rerender();
}

/**
 * @param {Element} container
 * @param {URLSearchParams} params
 */
export async function render(container, params) {
  clearInterval(refreshTimer);
  const filter = filterOf(params);
  const afterId = params.get("after_id");
  /** @type {Cursor | null} */
  const cursor = afterId ? { created_at: params.get("after_time") ?? "", id: afterId } : null;
  if (filter.toString() !== stackFilter || !cursor) {
    stackFilter = filter.toString();
    if (!cursor) olderStack = [];
  }
  const apiParams = apiFilter(filter);
  if (cursor) {
    apiParams.set("after_time", cursor.created_at);
    apiParams.set("after_id", cursor.id);
  }
  const results = h("div", { class: "results" }, notice(t("common.loading")));
  const resultsHeading = h("h2", { class: "results-heading" }, t("jobs.results"));
  const report = h("div", { class: "bulk-report", "aria-live": "polite" });
  const refreshed = h("small", { class: "refreshed" });
  const auto = h("input", { type: "checkbox", checked: localStorage.getItem(AUTO_REFRESH_KEY) !== "off" });
  const kinds = operator()?.kinds ?? [];
  const codes = operator()?.error_codes ?? [];

  const load = async () => {
    // A refresh redraws the rows: a keyboard on one keeps its place (the same job's row, or the
    // results' heading when that job has left the page), not the <body> a replaced element leaves.
    const focused = document.activeElement;
    const focusedJob = focused && results.contains(focused) ? focused.closest("tr")?.getAttribute("data-job-id") ?? "" : null;
    try {
      const page = /** @type {JobsPage} */ (await api(`jobs?${apiParams}`));
      const counted = page.count !== null ? t(page.count === 1 ? "jobs.countOne" : "jobs.count", { count: number(page.count) })
        : page.count_capped ? t("jobs.countCapped", { count: number(10000) }) : null;
      replace(
        results,
        counted ? h("p", { class: "count-line" }, counted) : null,
        page.partial ? notice(t("jobs.partial", { time: dateTime(page.searched_until) })) : null,
        page.jobs.length ? jobsTable(page.jobs) : notice(t("jobs.none")),
        pager(filter, page, cursor),
      );
      refreshed.textContent = t("jobs.refreshedAt", { time: dateTime(new Date()) });
    } catch (error) {
      replace(results, notice(problemText(error), "error"));
    }
    if (focusedJob !== null) {
      const row = [...results.querySelectorAll("tr[data-job-id]")].find((r) => r.getAttribute("data-job-id") === focusedJob);
      const link = row?.querySelector("a");
      if (link) link.focus();
      else {
        resultsHeading.tabIndex = -1;
        resultsHeading.focus();
      }
    }
  };

  auto.addEventListener("change", () => localStorage.setItem(AUTO_REFRESH_KEY, auto.checked ? "on" : "off"));
  refreshTimer = setInterval(() => {
    if (auto.checked && !document.hidden && location.hash.startsWith("#/jobs") && !document.querySelector("dialog[open]")) load();
  }, REFRESH_MS);

  const admin = isAdmin();
  /** @type {(action: "retry" | "cancel", label: string) => HTMLButtonElement} */
  const bulkButton = (action, label) =>
    h("button", { type: "button", class: `bulk-${action}`, disabled: !admin, "aria-disabled": !admin,
      onclick: () => bulk(action, filter, report, load) }, label);
  const state = filter.get("state");
  // No retry is offered for the failures whose advice says it cannot help (lib/failures.py).
  const showRetry = (!state || state === "failed") && !retryCannotHelp(filter.get("code"));
  const showCancel = !state || ["queued", "running"].includes(state);
  const marker = canMark();

  const form = h("div", { class: "filter-slot" });
  replace(
    container,
    h("div", { class: "jobs-view" },
      stateTabs(filter),
      form,
      h("div", { class: "toolbar" },
        h("label", { class: "auto-refresh" }, auto, " ", t("jobs.autoRefresh")), refreshed,
        h("div", { class: "bulk-buttons" },
          showRetry ? bulkButton("retry", t("jobs.bulkRetry")) : null,
          showCancel ? bulkButton("cancel", t("jobs.bulkCancel")) : null,
          h("button", { type: "button", class: "bulk-done", disabled: !marker, "aria-disabled": !marker,
            onclick: () => markAllDone("jobs", filter.toString(), report, load) }, t("jobs.bulkDone"))),
        admin ? null : h("small", { class: "hint" }, t(operator()?.role === "clerk" ? "jobs.clerkHint" : "jobs.viewerHint"))),
      report,
      resultsHeading,
      results),
  );
  replace(form, filterForm(filter, kinds, codes));
  await load();
}
