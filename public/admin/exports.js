// @ts-check
// An admin's exports view (#/exports): the originals filed in a date range (the tax officer's
// download request, or the office's own copy), as `document-jobs-admin export --from --to` writes
// them, built by a job of the queue in Storage (POST /api/admin/exports), since a year's faxes do
// not fit one answer of a function. The list shows how far each export got; a finished one's links
// (its zip parts, index.csv and SHA256SUMS) are signed when the admin asks, valid for an hour, and
// never kept by the page beyond showing them.

import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { bytes, dateTime, number, t } from "./i18n.js";
import { notice, problemText } from "./ui.js";

/**
 * @typedef {{ id: string, date_from: string, date_to: string, requested_at: string,
 *   requested_by_email: string | null, total: number, written: number, bytes: number,
 *   state: string | null, error_code: string | null, finished_at: string | null,
 *   parts: { part: number }[] }} Export
 * @typedef {{ name: string, url: string, size_bytes: number, sha256: string }} Link
 */

/**
 * The links of a finished export, asked for now.
 * @param {Export} done
 * @param {Element} place
 */
async function showLinks(done, place) {
  replace(place, notice(t("exports.signing")));
  try {
    const signed = /** @type {{ links: Link[], expires_in: number }} */ (
      await api(`exports/${done.id}/links`, { method: "POST", body: {} }));
    replace(place, h("p", { class: "hint" }, t("exports.linksExpire", { minutes: number(signed.expires_in / 60) })),
      h("ul", { class: "export-links" }, signed.links.map((link) => h("li", {},
        h("a", { href: link.url, download: link.name, rel: "noreferrer" }, link.name), " ",
        h("span", { class: "muted" }, bytes(link.size_bytes)), " ",
        h("code", { class: "mono" }, link.sha256)))));
  } catch (error) {
    replace(place, notice(problemText(error), "error"));
  }
}

/** @param {Export} item */
function exportRow(item) {
  const links = h("div", { class: "export-links-place", "aria-live": "polite" });
  const state = item.finished_at ? "completed" : item.state ?? "queued";
  return h("li", { class: "export-item", "data-export": item.id },
    h("strong", {}, t("exports.range", { from: item.date_from, to: item.date_to })), " ",
    h("span", { class: `badge state-${state}` }, t(`state.${state}`)), " ",
    h("span", { class: "export-progress" }, t("exports.progress", {
      written: number(item.written), total: number(item.total), size: bytes(item.bytes),
      parts: number(item.parts.length) })),
    item.error_code ? [" ", h("code", { class: "mono" }, item.error_code)] : null,
    h("div", { class: "muted" }, t("exports.requestedBy", { at: dateTime(item.requested_at),
      who: item.requested_by_email ?? "" })),
    item.finished_at ? h("button", { type: "button", class: "export-get-links",
      onclick: () => showLinks(item, links) }, t("exports.getLinks")) : null,
    links);
}

/** @param {Element} list */
async function refresh(list) {
  try {
    const found = /** @type {{ exports: Export[] }} */ (await api("exports"));
    replace(list, found.exports.length ? h("ul", { class: "export-items" }, found.exports.map(exportRow))
      : h("p", {}, t("exports.none")));
  } catch (error) {
    replace(list, notice(problemText(error), "error"));
  }
}

/** @param {Element} container */
export async function render(container) {
  const from = h("input", { type: "date", name: "from", required: true });
  const to = h("input", { type: "date", name: "to", required: true });
  const status = h("div", { class: "export-status", "aria-live": "polite" });
  const button = h("button", { type: "submit", class: "primary" }, t("exports.request"));
  const list = h("div", { class: "export-list" });
  const form = h("form", { class: "export-form" }, h("h3", {}, t("exports.requestHeading")),
    h("p", {}, t("exports.explain")), h("label", {}, t("exports.from"), from), h("label", {}, t("exports.to"), to),
    button, status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    try {
      const asked = /** @type {{ total: number }} */ (
        await api("exports", { method: "POST", body: { from: from.value, to: to.value } }));
      replace(status, notice(t("exports.requested", { total: number(asked.total) }), "success"));
      await refresh(list);
    } catch (error) {
      replace(status, notice(problemText(error), "error"));
    } finally {
      button.disabled = false;
    }
  });
  const again = h("button", { type: "button", class: "export-refresh", onclick: () => refresh(list) },
    t("exports.refresh"));
  replace(container, h("div", { class: "exports-view" }, h("h2", {}, t("exports.heading")), form,
    h("h3", {}, t("exports.listHeading")), again, list));
  await refresh(list);
}
