// @ts-check
// The inbox (受信FAX): one row per fax, newest first, with its sender and number, the line that
// received it, its pages and page-1 thumbnail, and whether it is stored. Filters (received date,
// sender or number, line, search) and the shortcuts 今日, 昨日, 今週 are kept in the URL
// (#/faxes?period=today&line=...), so that a reload or a shared link shows the same faxes.

import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { handlingControl, markAllDone, newHandling } from "./handling.js";
import { dateTime, language, number, t } from "./i18n.js";
import { canMark, explained, isAdmin, isolated, jobLink, notice, operator, problemText } from "./ui.js";
import { fieldText, typedYen } from "./faxindex.js";

// The law's search by the index fields (faxindex.js): the API's own parameter names.
const INDEX_KEYS = ["date_from", "date_to", "amount_min", "amount_max", "counterparty", "type"];
// Who is dealing with a fax (handling.js): its state, and whose it is ("me").
const HANDLING_KEYS = ["handling", "assignee"];
const FILTER_KEYS = ["period", "from", "to", "sender", "line", "q", ...HANDLING_KEYS, ...INDEX_KEYS];
const DOCUMENT_TYPES = ["請求書", "注文書", "納品書", "見積書", "契約書", "領収書", "その他"];
// The handling filter's choices: any, not done yet (new or in progress), or one state.
const HANDLING_FILTERS = ["", "open", "new", "in_progress", "done"];
const PERIODS = ["today", "yesterday", "week"];
const PHONE_QUERY = "(max-width: 700px)"; // admin.css's breakpoint for cards

/** @typedef {{ received_at: string, id: string }} Cursor the last fax of the page before: the keyset */
/** @typedef {{ address: string, name: string, number: string | null }} Line one of the office's lines */
/**
 * Who sent a fax, as lib/screen/calls.py sender_of reads it.
 * @typedef {object} Sender
 * @property {string | null} name
 * @property {string | null} number ASCII digits
 * @property {string | null} number_display as written
 * @property {{ ja: string, en: string } | null} withheld why there is no number
 * @property {string | null} format the subject's format, when known
 */
/**
 * A fax as the inbox lists it (document_jobs_internal.fax_summary).
 * @typedef {object} Fax
 * @property {string} id the e-mail's
 * @property {string} received_at
 * @property {string | null} from
 * @property {string | null} subject
 * @property {string | null} to the first To address
 * @property {Line | null} line
 * @property {number} attachments
 * @property {number | null} pages
 * @property {string | null} thumbnail_url page 1, a signed Storage URL
 * @property {string | null} view_error_code a file that could not be prepared for viewing
 * @property {"stored" | "fetching" | "failed"} storing
 * @property {string | null} error_code why it could not be fetched
 * @property {string | null} job_id its fetch job, when one is kept
 * @property {boolean} preparing
 * @property {"webhook" | "reconciliation"} found_by
 * @property {string | null} reconciled_at
 * @property {Sender} sender
 * @property {import("./handling.js").Handling | null} handling who is dealing with it
 * @property {import("./faxindex.js").IndexFields | null} index its index fields, null before any entry
 */
/**
 * GET /api/admin/faxes.
 * @typedef {object} FaxesPage
 * @property {Fax[]} faxes
 * @property {number | null} count
 * @property {boolean} count_capped
 * @property {boolean} partial
 * @property {string | null} searched_until
 * @property {Cursor | null} next
 * @property {Line[]} lines
 */

/** @type {Array<Cursor | null>} */
let olderStack = [];
let stackFilter = "";

/**
 * The office's time zone, which the day shortcuts and typed dates mean: its setting
 * (office_settings.time_zone), as GET /api/admin/me answered it when the page started.
 * @returns {string}
 */
export function officeTimeZone() {
  const who = operator();
  if (!who) throw new Error("the office's time zone is read once signed in");
  return who.time_zone;
}

/**
 * The UTC offset of the office's zone at that moment, as ISO 8601 writes it ("+09:00").
 * @param {Date} at
 */
function officeOffset(at) {
  // Asked of the zone at that moment: a zone with summer time has two offsets a year.
  const name = new Intl.DateTimeFormat("en-US", { timeZone: officeTimeZone(), timeZoneName: "longOffset" })
    .formatToParts(at).find((part) => part.type === "timeZoneName")?.value ?? "GMT";
  const offset = name.replace("GMT", "");
  return offset === "" ? "+00:00" : offset;
}

/**
 * The office's calendar date of a moment: "2026-12-04".
 * @param {Date} at
 */
export function officeDate(at) {
  return new Intl.DateTimeFormat("en-CA", { timeZone: officeTimeZone(), year: "numeric", month: "2-digit", day: "2-digit" })
    .format(at);
}

/**
 * A calendar date moved by whole days: "2026-12-04", -1 -> "2026-12-03".
 * @param {string} date
 * @param {number} days
 */
function addDays(date, days) {
  const [year, month, day] = date.split("-").map(Number);
  return new Date(Date.UTC(year, month - 1, day + days)).toISOString().slice(0, 10);
}

/**
 * The start of the office's day `date` as an ISO 8601 time with the office's offset.
 * @param {string} date
 */
function startOf(date) {
  const noon = new Date(`${date}T12:00:00Z`); // the day's offset, whatever the hour of a change
  return `${date}T00:00:00${officeOffset(noon)}`;
}

const DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;

/**
 * A typed date as "YYYY-MM-DD" (full-width digits and hyphens taken too), "" for none, null when
 * it is not a date.
 * @param {string} value
 */
export function typedDate(value) {
  const text = value.trim().replace(/[０-９]/g, (d) => String(d.charCodeAt(0) - 0xff10)).replace(/[－ー/／]/g, "-");
  if (!text) return "";
  const parts = DATE.exec(text);
  if (!parts) return null;
  const [year, month, day] = parts.slice(1).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return date.toISOString().slice(0, 10);
}

/**
 * The received-time range a filter names: the shortcut's days (today, yesterday, this week from
 * Monday) or the typed dates (both included), in the office's zone.
 * @param {URLSearchParams} filter
 * @param {Date} [now]
 * @returns {{ from: string | null, to: string | null }}
 */
export function receivedRange(filter, now = new Date()) {
  const today = officeDate(now);
  const period = filter.get("period");
  if (period === "today") return { from: startOf(today), to: startOf(addDays(today, 1)) };
  if (period === "yesterday") return { from: startOf(addDays(today, -1)), to: startOf(today) };
  if (period === "week") {
    const weekday = (new Date(`${today}T12:00:00Z`).getUTCDay() + 6) % 7; // Monday 0
    return { from: startOf(addDays(today, -weekday)), to: startOf(addDays(today, 1)) };
  }
  const from = typedDate(filter.get("from") ?? "");
  const to = typedDate(filter.get("to") ?? "");
  return { from: from ? startOf(from) : null, to: to ? startOf(addDays(to, 1)) : null };
}

/** @param {URLSearchParams} params */
function filterOf(params) {
  const filter = new URLSearchParams();
  for (const key of FILTER_KEYS) {
    const value = params.get(key);
    if (value) filter.set(key, value);
  }
  return filter;
}

/**
 * @param {URLSearchParams} filter
 * @param {Cursor | null} [cursor]
 */
function hashFor(filter, cursor) {
  const params = new URLSearchParams(filter);
  if (cursor) {
    params.set("after_time", cursor.received_at);
    params.set("after_id", cursor.id);
  }
  const query = params.toString();
  return `#/faxes${query ? `?${query}` : ""}`;
}

/** @param {URLSearchParams} filter */
function shortcuts(filter) {
  const active = filter.get("period") ?? "";
  /** @type {(period: string) => HTMLAnchorElement} */
  const tab = (period) => {
    const next = new URLSearchParams(filter);
    next.delete("from");
    next.delete("to");
    if (period) next.set("period", period);
    else next.delete("period");
    return h("a", { href: hashFor(next), "aria-current": active === period ? "page" : null }, t(`inbox.period.${period || "all"}`));
  };
  return h("nav", { class: "tabs", "aria-label": t("inbox.periods") }, tab(""), PERIODS.map(tab));
}

/**
 * @param {URLSearchParams} filter
 * @param {Line[]} lines
 */
function filterForm(filter, lines) {
  /** @param {string} name */
  const date = (name) => h("input", { name, type: "text", inputmode: "numeric", autocomplete: "off", size: 11,
    value: filter.get(name) ?? "", placeholder: "2026-12-01", "aria-describedby": "date-format" });
  const from = date("from");
  const to = date("to");
  const sender = h("input", { name: "sender", type: "search", value: filter.get("sender") ?? "", autocomplete: "off", size: 24,
    maxlength: 200, placeholder: t("inbox.senderHint") });
  const chosen = filter.get("line") ?? "";
  const line = h("select", { name: "line" }, h("option", { value: "" }, t("inbox.anyLine")),
    lines.map((l) => h("option", { value: l.address, selected: l.address === chosen }, `${l.name} (${l.address})`)),
    chosen && !lines.some((l) => l.address === chosen) ? h("option", { value: chosen, selected: true }, chosen) : null);
  const q = h("input", { name: "q", type: "search", value: filter.get("q") ?? "", placeholder: t("inbox.searchHint"), size: 30, maxlength: 200 });
  const handling = h("select", { name: "handling" }, HANDLING_FILTERS.map((value) => h("option",
    { value, selected: (filter.get("handling") ?? "") === value }, t(`inbox.handling.${value || "all"}`))));
  const mine = h("input", { type: "checkbox", name: "assignee", value: "me", checked: filter.get("assignee") === "me" });
  /** @param {string} name */
  const day = (name) => h("input", { name, type: "date", min: "1950-01-01", max: "2099-12-31", value: filter.get(name) ?? "" });
  /** @param {string} name */
  const yen = (name) => h("input", { name, type: "text", inputmode: "numeric", autocomplete: "off", size: 12,
    value: filter.get(name) ?? "" });
  const dateFrom = day("date_from");
  const dateTo = day("date_to");
  const amountMin = yen("amount_min");
  const amountMax = yen("amount_max");
  const counterparty = h("input", { name: "counterparty", type: "search", value: filter.get("counterparty") ?? "",
    autocomplete: "off", size: 24, maxlength: 200 });
  const chosenType = filter.get("type") ?? "";
  const type = h("select", { name: "type" }, h("option", { value: "" }, t("index.anyType")),
    DOCUMENT_TYPES.map((kind) => h("option", { value: kind, selected: kind === chosenType }, kind)));
  const law = h("fieldset", { class: "index-filters" },
    h("legend", {}, t("index.searchLegend")),
    h("label", {}, t("index.dateFrom"), dateFrom),
    h("label", {}, t("index.dateTo"), dateTo),
    h("label", {}, t("index.amountMin"), amountMin),
    h("label", {}, t("index.amountMax"), amountMax),
    h("label", {}, t("index.counterparty"), counterparty),
    h("label", {}, t("index.doc_type"), type));
  const form = h("form", { class: "filters", role: "search" },
    h("label", {}, t("inbox.filterFrom"), from),
    h("label", {}, t("inbox.filterTo"), to),
    h("small", { id: "date-format", class: "time-format" }, t("inbox.dateFormat", { zone: officeTimeZone() })),
    h("label", {}, t("inbox.filterSender"), sender),
    h("label", {}, t("inbox.filterLine"), line),
    h("label", { class: "wide" }, t("inbox.search"), q),
    h("label", {}, t("inbox.filterHandling"), handling),
    h("label", { class: "checkbox" }, mine, " ", t("inbox.mine")),
    law,
    h("div", { class: "buttons" },
      h("button", { type: "submit", class: "primary" }, t("jobs.apply")),
      h("button", { type: "button", onclick: () => { location.hash = "#/faxes"; } }, t("jobs.clear"))));
  for (const field of [from, to, amountMin, amountMax]) field.addEventListener("input", () => field.setCustomValidity(""));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const dates = [from, to].map((field) => {
      const value = typedDate(field.value);
      field.setCustomValidity(value === null ? t("inbox.dateInvalid") : "");
      return value ?? "";
    });
    const amounts = [amountMin, amountMax].map((field) => {
      const value = typedYen(field.value);
      field.setCustomValidity(value === null ? t("index.amountInvalid") : "");
      return value === null ? "" : String(value);
    });
    if (!form.reportValidity()) return;
    const next = new URLSearchParams();
    // Typed dates replace a shortcut; without dates the shortcut stays.
    const period = filter.get("period");
    if (period && !dates[0] && !dates[1]) next.set("period", period);
    for (const [name, value] of [["from", dates[0]], ["to", dates[1]], ["sender", sender.value.trim()],
      ["line", line.value], ["q", q.value.trim()], ["handling", handling.value], ["assignee", mine.checked ? "me" : ""],
      ["date_from", dateFrom.value], ["date_to", dateTo.value], ["amount_min", amounts[0]], ["amount_max", amounts[1]],
      ["counterparty", counterparty.value.trim()], ["type", type.value]]) {
      if (value) next.set(name, value);
    }
    location.hash = hashFor(next);
  });
  const active = ["from", "to", "sender", "line", "q", ...HANDLING_KEYS, ...INDEX_KEYS].filter((key) => filter.get(key)).length;
  return h("details", { class: "filter-fold", open: !matchMedia(PHONE_QUERY).matches || active > 0 },
    h("summary", {}, t("jobs.filters"), active ? ` (${t("jobs.filtersActive", { count: number(active) })})` : null), form);
}

/**
 * The sender as the row shows it: the name (or the subject, for a format the parser does not know
 * and a From with no name), and the number, or why there is none.
 * @param {Fax} fax
 */
export function senderCell(fax) {
  const { sender } = fax;
  const withheld = sender.withheld ? sender.withheld[language() === "ja" ? "ja" : "en"] : null;
  return [
    h("div", { class: "sender-name" }, isolated(sender.name ?? fax.from ?? "") ?? t("inbox.unknownSender")),
    sender.number_display ? h("div", { class: "sender-number mono" }, t("inbox.faxNumber"), " ", sender.number_display)
      : withheld ? h("div", { class: "sender-number" }, t("inbox.faxNumber"), " ", withheld) : null,
    fax.subject ? h("div", { class: "subject" }, isolated(fax.subject)) : null,
  ];
}

/**
 * The line that received it: its name, or the To address when no line is named for it.
 * @param {Fax} fax
 */
export function lineText(fax) {
  return fax.line ? fax.line.name : fax.to ?? "";
}

/**
 * How a fax stands, in plain words: stored, being fetched, or cannot be fetched (with the clerk's
 * one line of advice, and for an admin the job's link); and a view that could not be made.
 * @param {Fax} fax
 */
export function storingState(fax) {
  const said = fax.error_code ? explained("job", fax.error_code) : null;
  const badge = { stored: "completed", fetching: "running", failed: "failed" }[fax.storing];
  return h("div", { class: `storing storing-${fax.storing}` },
    h("span", { class: `badge state-${badge}` }, t(`inbox.storing.${fax.storing}`)),
    fax.storing === "failed" && said ? h("div", { class: "advice" }, said.clerk) : null,
    fax.storing === "stored" && fax.preparing ? h("div", { class: "hint" }, t("inbox.preparing")) : null,
    fax.view_error_code ? h("div", { class: "advice" }, t("inbox.viewFailed")) : null,
    isAdmin() && fax.job_id && fax.storing !== "stored" ? h("div", {}, jobLink(fax.job_id, t("inbox.jobLink"))) : null);
}

/**
 * Who is dealing with a fax (未対応 / 対応中 / 対応済み), and for a clerk or an admin the one tap
 * that moves it on (handling.js): a row's compact control, or the fax page's whole one.
 * @param {Fax} fax
 * @param {import("./handling.js").ControlOptions} [options]
 */
export function handlingSlot(fax, options = { compact: true }) {
  return handlingControl(fax.handling ?? newHandling(fax.id), options);
}

/**
 * A fax's index fields in its row: the type and date, the counterparty, the amount.
 * @param {Fax} fax
 */
function indexCell(fax) {
  if (!fax.index) return h("span", { class: "hint" }, t("index.notEntered"));
  const { index } = fax;
  return [
    h("div", {}, [index.doc_type, index.transaction_date].filter(Boolean).join(" ")),
    index.counterparty ? h("div", { class: "index-counterparty" }, isolated(index.counterparty)) : null,
    index.amount !== null ? h("div", { class: "number" }, fieldText("amount", index)) : null,
  ];
}

/**
 * The list: a table, cards on a phone (admin.css). A row is one tab stop (the link on its time);
 * a click anywhere else on it (not on a selection of its text) opens the fax too.
 * @param {Fax[]} faxes
 */
function faxesTable(faxes) {
  const head = ["inbox.page1", "inbox.received", "inbox.sender", "index.column", "inbox.line", "inbox.pages", "inbox.state"];
  const body = h("tbody", {}, faxes.map((fax) => h("tr", { "data-fax-id": fax.id },
    h("td", { class: "thumbnail" }, fax.thumbnail_url
      ? h("img", { src: fax.thumbnail_url, alt: t("inbox.thumbnailAlt"), loading: "lazy", width: 60, height: 85 })
      : h("span", { class: "no-thumbnail" }, t("inbox.noThumbnail"))),
    h("td", { class: "received" }, h("a", { href: `#/faxes/${encodeURIComponent(fax.id)}` }, dateTime(fax.received_at))),
    h("td", { class: "sender" }, senderCell(fax)),
    h("td", { class: "index" }, indexCell(fax)),
    h("td", { class: "line" }, isolated(lineText(fax))),
    h("td", { class: "number pages" }, fax.pages !== null ? t("inbox.pageCount", { count: number(fax.pages) }) : ""),
    h("td", { class: "state" }, storingState(fax), handlingSlot(fax)))));
  body.addEventListener("click", (event) => {
    const target = /** @type {Element} */ (event.target);
    if (target.closest("a, button, select, input") || String(getSelection() ?? "")) return;
    const row = target.closest("tr[data-fax-id]");
    if (row instanceof HTMLElement) location.hash = `#/faxes/${encodeURIComponent(row.dataset.faxId ?? "")}`;
  });
  return h("table", { class: "faxes" }, h("thead", {}, h("tr", {}, head.map((key) => h("th", { scope: "col" }, t(key))))), body);
}

/**
 * @param {URLSearchParams} filter
 * @param {FaxesPage} page
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
 * The API's query for a filter: the received range made times, a sender as typed (the server
 * reads a number in it, full-width too), the line, the search.
 * @param {URLSearchParams} filter
 */
export function apiQuery(filter) {
  const query = new URLSearchParams();
  const { from, to } = receivedRange(filter);
  if (from) query.set("from", from);
  if (to) query.set("to", to);
  for (const key of ["sender", "line", "q", ...HANDLING_KEYS, ...INDEX_KEYS]) {
    const value = filter.get(key);
    if (value) query.set(key, value);
  }
  return query;
}

/**
 * @param {Element} container
 * @param {URLSearchParams} params
 */
export async function render(container, params) {
  const filter = filterOf(params);
  const afterId = params.get("after_id");
  /** @type {Cursor | null} */
  const cursor = afterId ? { received_at: params.get("after_time") ?? "", id: afterId } : null;
  if (filter.toString() !== stackFilter || !cursor) {
    stackFilter = filter.toString();
    if (!cursor) olderStack = [];
  }
  const query = apiQuery(filter);
  if (cursor) {
    query.set("after_time", cursor.received_at);
    query.set("after_id", cursor.id);
  }
  const results = h("div", { class: "results" }, notice(t("common.loading")));
  const form = h("div", { class: "filter-slot" });
  const report = h("div", { class: "bulk-report", "aria-live": "polite" });
  const marker = canMark();
  replace(container, h("div", { class: "inbox-view" },
    h("h2", {}, t("inbox.heading")),
    shortcuts(filter),
    form,
    isAdmin() ? h("p", { class: "console-link" }, h("a", { href: "#/jobs" }, t("inbox.jobsConsole"))) : null,
    // Every fax the filter lists, marked done at once (the count first): a clerk's or an admin's.
    marker ? h("div", { class: "toolbar" }, h("div", { class: "bulk-buttons" },
      h("button", { type: "button", class: "bulk-done", onclick: () => markAllDone("faxes", apiQuery(filter).toString(), report,
        () => render(container, params)) }, t("jobs.bulkDone")))) : null,
    report,
    h("h3", { class: "results-heading" }, t("inbox.results")),
    results));
  /** @type {FaxesPage} */
  let page;
  try {
    page = /** @type {FaxesPage} */ (await api(`faxes?${query}`));
  } catch (error) {
    replace(form, filterForm(filter, []));
    replace(results, notice(problemText(error), "error"));
    return;
  }
  replace(form, filterForm(filter, page.lines));
  const counted = page.count !== null ? t(page.count === 1 ? "inbox.countOne" : "inbox.count", { count: number(page.count) })
    : page.count_capped ? t("inbox.countCapped", { count: number(10000) }) : null;
  replace(results,
    counted ? h("p", { class: "count-line" }, counted) : null,
    page.partial ? notice(t("inbox.partial", { time: dateTime(page.searched_until) })) : null,
    page.faxes.length ? faxesTable(page.faxes) : notice(t("inbox.none")),
    pager(filter, page, cursor));
}
