// @ts-check
// A fax's index fields on its page (取引年月日, 取引金額, 取引先, 書類の種類), which the law's search
// finds it by: a clerk or an admin enters them (the counterparty suggested from the sender's
// number and name), a correction of a value entered before asks for its reason, and the history of
// every change (before and after, who, when, why) is shown, and printed with the fax's facts
// (admin.css's print rules leave the navigation and the viewer out).

import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { dateTime, number, t } from "./i18n.js";
import { isolated, notice, operator, problemText } from "./ui.js";

/**
 * @typedef {object} IndexFields
 * @property {string | null} transaction_date YYYY-MM-DD
 * @property {number | null} amount whole yen
 * @property {string | null} counterparty
 * @property {string | null} doc_type
 */
/**
 * @typedef {object} IndexChange
 * @property {number} id
 * @property {string} at
 * @property {string | null} actor_email
 * @property {IndexFields | null} before
 * @property {IndexFields} after
 * @property {string | null} reason
 * @property {number} version
 */
/**
 * What the fax's page is given of its index (GET /api/admin/faxes/<id>).
 * @typedef {object} IndexData
 * @property {IndexFields | null} index
 * @property {number} index_version
 * @property {IndexChange[]} index_history
 * @property {number} index_history_total
 * @property {string[]} document_types
 * @property {string[]} counterparty_suggestions
 */

/** @type {Array<keyof IndexFields>} */
const FIELDS = ["transaction_date", "amount", "counterparty", "doc_type"];

/** Who may enter the fields: a clerk or an admin (set_fax_index checks the same). */
export function canIndex() {
  const role = /** @type {string | undefined} */ (operator()?.role);
  return role === "admin" || role === "clerk";
}

/**
 * A field's value as the page shows it.
 * @param {keyof IndexFields} field
 * @param {IndexFields | null} fields
 */
export function fieldText(field, fields) {
  const value = fields ? fields[field] : null;
  if (value === null || value === undefined || value === "") return "—";
  if (field === "amount") return t("index.yen", { amount: number(Number(value)) });
  return String(value);
}

/**
 * Yen as a clerk types it (12,000 / １２０００ / ¥12000), null when it is not whole yen, "" for none.
 * @param {string} value
 */
export function typedYen(value) {
  const text = value.trim().replace(/[０-９]/g, (d) => String(d.charCodeAt(0) - 0xff10)).replace(/[,，¥￥円\s]/g, "");
  if (!text) return "";
  return /^\d{1,12}$/.test(text) ? Number(text) : null;
}

/**
 * The history, oldest first: when, who, each field that changed (before → after), why.
 * @param {IndexData} data
 */
function historyTable(data) {
  if (!data.index_history.length) return h("p", { class: "index-no-history" }, t("index.noHistory"));
  return h("table", { class: "index-history" },
    h("caption", {}, t("index.historyCaption")),
    h("thead", {}, h("tr", {}, ["index.at", "index.by", "index.change", "index.reason"].map((k) => h("th", { scope: "col" }, t(k))))),
    h("tbody", {}, data.index_history.map((change) => h("tr", {},
      h("td", {}, dateTime(change.at)),
      h("td", {}, isolated(change.actor_email ?? "")),
      h("td", {}, h("ul", { class: "index-changes" }, FIELDS
        .filter((field) => (change.before ? change.before[field] : null) !== change.after[field])
        .map((field) => h("li", {}, h("span", { class: "index-field" }, t(`index.${field}`)), " ",
          change.before ? [isolated(fieldText(field, change.before)), " → "] : null,
          isolated(fieldText(field, change.after)))))),
      h("td", { class: "index-reason" }, change.reason ? isolated(change.reason) : t(change.before ? "index.noReason" : "index.firstEntry"))))));
}

/**
 * The form: the four fields and a reason, sent as one change.
 * @param {string} faxId
 * @param {IndexData} data
 * @param {Element} report
 * @param {() => void} reload
 */
function indexForm(faxId, data, report, reload) {
  const now = data.index;
  const date = h("input", { name: "transaction_date", type: "date", min: "1950-01-01", max: "2099-12-31",
    value: now?.transaction_date ?? "" });
  const amount = h("input", { name: "amount", type: "text", inputmode: "numeric", autocomplete: "off", size: 14,
    value: now?.amount !== null && now?.amount !== undefined ? String(now.amount) : "", "aria-describedby": "index-amount-hint" });
  const counterparty = h("input", { name: "counterparty", type: "text", maxlength: 200, size: 30, autocomplete: "off",
    list: "index-counterparties", value: now?.counterparty ?? "" });
  const suggestions = h("datalist", { id: "index-counterparties" },
    data.counterparty_suggestions.map((name) => h("option", { value: name })));
  const type = h("select", { name: "doc_type" }, h("option", { value: "" }, t("index.noType")),
    data.document_types.map((kind) => h("option", { value: kind, selected: now?.doc_type === kind }, kind)));
  const reason = h("textarea", { name: "reason", rows: 2, maxlength: 500, "aria-describedby": "index-reason-hint" });
  const save = h("button", { type: "submit", class: "primary" }, t("index.save"));
  const form = h("form", { class: "index-form" },
    h("label", {}, t("index.transaction_date"), date),
    h("label", {}, t("index.amount"), amount),
    h("small", { id: "index-amount-hint", class: "hint" }, t("index.amountHint")),
    h("label", {}, t("index.counterparty"), counterparty, suggestions),
    data.counterparty_suggestions.length
      ? h("small", { class: "hint" }, t("index.suggested", { names: data.counterparty_suggestions.join("、") })) : null,
    h("label", {}, t("index.doc_type"), type),
    h("label", { class: "wide" }, t("index.reasonLabel"), reason),
    h("small", { id: "index-reason-hint", class: "hint" }, t("index.reasonHint")),
    h("div", { class: "buttons" }, save));
  for (const field of [amount, reason]) field.addEventListener("input", () => field.setCustomValidity(""));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const yen = typedYen(amount.value);
    amount.setCustomValidity(yen === null ? t("index.amountInvalid") : "");
    /** @type {IndexFields} */
    const values = { transaction_date: date.value || null, amount: yen === "" || yen === null ? null : yen,
      counterparty: counterparty.value.trim() || null, doc_type: type.value || null };
    // A value entered before that changes (or is emptied) is a correction: it needs its reason.
    const corrects = now ? FIELDS.some((field) => now[field] !== null && now[field] !== values[field]) : false;
    reason.setCustomValidity(corrects && !reason.value.trim() ? t("index.reasonRequired") : "");
    if (!form.reportValidity()) return;
    save.disabled = true;
    try {
      const result = /** @type {{ changed: boolean }} */ (await api(`faxes/${encodeURIComponent(faxId)}/index`, {
        method: "POST", body: { values, reason: reason.value.trim() || null, version: data.index_version } }));
      replace(report, notice(t(result.changed ? "index.saved" : "index.unchanged")));
      reload();
    } catch (error) {
      replace(report, notice(problemText(error), "error"));
      save.disabled = false;
    }
  });
  return form;
}

/**
 * The section on the fax's page.
 * @param {string} faxId
 * @param {IndexData} data
 * @param {() => void} reload
 */
export function indexSection(faxId, data, reload) {
  const report = h("div", { "aria-live": "polite" });
  const shown = h("dl", { class: "facts index-now" }, FIELDS.flatMap((field) => [
    h("dt", {}, t(`index.${field}`)), h("dd", {}, isolated(fieldText(field, data.index)))]));
  return h("section", { class: "fax-index", "aria-labelledby": "fax-index-heading" },
    h("h3", { id: "fax-index-heading" }, t("index.heading")),
    shown,
    canIndex() ? h("details", { class: "index-edit", open: !data.index },
      h("summary", {}, t(data.index ? "index.correct" : "index.enter")), indexForm(faxId, data, report, reload)) : null,
    report,
    h("div", { class: "index-history-head" },
      h("h4", {}, t("index.history")),
      h("button", { type: "button", class: "index-print", onclick: () => window.print() }, t("index.print"))),
    historyTable(data),
    data.index_history_total > data.index_history.length
      ? h("p", { class: "hint" }, t("index.historyCut", { count: number(data.index_history.length) })) : null);
}
