// @ts-check
// A fax's page (#/faxes/<id>): who sent it, when, to which line, how it came in (its webhook, or
// found by reconciliation, and when), how it stands, and its documents in the fax viewer, at the
// rotation remembered for it; the originals download from the viewer.

import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { bytes, dateTime, t } from "./i18n.js";
import { handlingSlot, lineText, senderCell, storingState } from "./inbox.js";
import { canMark, definitions, isAdmin, isolated, jobLink, notice, problemText, stackedTable } from "./ui.js";
import { mountViewer } from "./viewer.js";
import { indexSection } from "./faxindex.js";

/** @typedef {import("./inbox.js").Fax} Fax */
/** @typedef {import("./viewer.js").Viewer} Viewer */
/**
 * One of a fax's files, as its page is given it.
 * @typedef {object} FaxAttachment
 * @property {string} id
 * @property {string | null} filename
 * @property {string} download_name
 * @property {string | null} content_type
 * @property {number | null} size_bytes
 * @property {number | null} page_count
 * @property {"pdf" | "picture" | "none"} view_kind
 * @property {string | null} view_url a signed Storage URL of what is drawn
 * @property {string | null} view_error_code why it could not be prepared for viewing
 */
/**
 * GET /api/admin/faxes/<id>.
 * @typedef {object} FaxDetail
 * @property {Fax & { to_all: string[], cc: string[], provider_email_id: string, message_id: string | null,
 *   recorded_at: string, rotation: number }} fax
 * @property {FaxAttachment[]} attachments
 * @property {Array<{ id: string, kind: string, status: string, last_error_code: string | null }>} jobs
 * @property {{ keep_until: string, time_zone: string, deletable: boolean }} retention the last day the fax must
 *   be kept (YYYY-MM-DD, a day in the office's time zone: the law counts the office's days, not the viewer's)
 */
/** @typedef {FaxDetail & import("./faxindex.js").IndexData} FaxPage */

/** @type {Viewer | null} the viewer on the page: one at a time, destroyed when the page is left */
let mounted = null;
window.addEventListener("hashchange", () => {
  if (mounted && !location.hash.startsWith("#/faxes/")) {
    mounted.destroy();
    mounted = null;
  }
});

/**
 * How the fax came in: by its webhook, or found by reconciliation (no webhook delivered it), and when.
 * @param {FaxDetail["fax"]} fax
 */
function foundBy(fax) {
  if (fax.found_by === "reconciliation") {
    return h("span", { class: "found-by-reconciliation" }, t("job.foundByReconciliation", { time: dateTime(fax.reconciled_at) }));
  }
  return t("fax.foundByWebhook", { time: dateTime(fax.recorded_at) });
}

/**
 * @param {FaxAttachment} attachment
 * @returns {import("./viewer.js").FaxDocument}
 */
function viewerDocument(attachment) {
  return {
    name: attachment.download_name,
    kind: attachment.view_url ? attachment.view_kind : "none",
    url: attachment.view_url ?? undefined,
    note: attachment.view_error_code ? t("inbox.viewFailed") : undefined,
    download: async () => {
      const { url } = /** @type {{ url: string }} */ (await api(`attachments/${attachment.id}/download`, { method: "POST", body: {} }));
      return url;
    },
  };
}

/**
 * @param {FaxAttachment[]} attachments
 */
function filesTable(attachments) {
  if (!attachments.length) return h("p", {}, t("fax.noFiles"));
  return stackedTable(h("table", { class: "files" },
    h("thead", {}, h("tr", {}, ["job.name", "job.type", "inbox.pages", "job.size"].map((k) => h("th", { scope: "col" }, t(k))))),
    h("tbody", {}, attachments.map((a) => h("tr", {},
      h("td", { class: "filename" }, isolated(a.download_name)),
      h("td", { class: "mono" }, a.content_type ?? ""),
      h("td", { class: "number" }, a.page_count ?? ""),
      h("td", { class: "number" }, bytes(a.size_bytes)))))));
}

/**
 * An admin's deletion of a fax whose keeping period is over, with a reason (the office rule, article
 * 10): the database records what goes, then deletes it; its files leave Storage with the CLI's
 * purge-deleted. Nothing for anyone else, nor before the keep-until date (the database refuses it too).
 * @param {string} faxId
 * @param {FaxDetail["retention"]} retention
 * @param {Element} container the page, replaced once the fax is gone
 */
function deletionSection(faxId, retention, container) {
  if (!isAdmin() || !retention.deletable) return null;
  const report = h("div", { "aria-live": "polite" });
  const reason = h("textarea", { name: "reason", rows: 2, maxlength: 500, required: true });
  const button = h("button", { type: "submit" }, t("fax.delete"));
  const form = h("form", { class: "fax-delete-form" },
    h("label", {}, t("fax.deleteReason"), reason), h("div", { class: "buttons" }, button));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    button.disabled = true;
    try {
      await api(`faxes/${encodeURIComponent(faxId)}/deletion`, { method: "POST", body: { reason: reason.value.trim() } });
      mounted?.destroy();
      mounted = null;
      replace(container, h("p", {}, h("a", { href: "#/faxes" }, t("fax.back"))), notice(t("fax.deleted")));
    } catch (error) {
      replace(report, notice(problemText(error), "error"));
      button.disabled = false;
    }
  });
  return h("details", { class: "fax-delete" }, h("summary", {}, t("fax.deleteHeading")),
    h("p", { class: "hint" }, t("fax.deleteHint")), form, report);
}

/**
 * @param {Element} container
 * @param {string} id the fax's (its e-mail's id)
 */
export async function render(container, id) {
  mounted?.destroy();
  mounted = null;
  replace(container, notice(t("common.loading")));
  /** @type {FaxPage} */
  let data;
  try {
    data = /** @type {FaxPage} */ (await api(`faxes/${encodeURIComponent(id)}`));
  } catch (error) {
    replace(container, h("p", {}, h("a", { href: "#/faxes" }, t("fax.back"))), notice(problemText(error), "error"));
    return;
  }
  const { fax, attachments, jobs } = data;
  const report = h("div", { class: "fax-report", "aria-live": "polite" });
  const viewerBox = h("div", { class: "fax-viewer" });
  const title = fax.sender.name ?? fax.from ?? t("inbox.unknownSender");
  replace(container, h("div", { class: "fax-view" },
    h("p", {}, h("a", { href: "#/faxes" }, t("fax.back"))),
    h("h2", {}, t("fax.heading", { time: dateTime(fax.received_at) })),
    h("div", { class: "columns" },
      h("section", {}, h("h3", {}, t("fax.facts")), definitions([
        [t("inbox.received"), dateTime(fax.received_at)],
        [t("inbox.sender"), senderCell(fax)],
        [t("inbox.line"), isolated(fax.line ? `${lineText(fax)} (${fax.line.address})` : lineText(fax))],
        [t("inbox.pages"), fax.pages !== null ? t("inbox.pageCount", { count: String(fax.pages) }) : null],
        [t("inbox.state"), storingState(fax)],
        [t("job.foundBy"), foundBy(fax)],
        [t("fax.handling"), handlingSlot(fax, { history: true })],
        [t("fax.keepUntil"), h("span", { class: "keep-until" },
          t("fax.keepUntilDate", { date: data.retention.keep_until, zone: data.retention.time_zone }))],
      ])),
      h("section", {}, h("h3", {}, t("job.email")), definitions([
        [t("job.from"), isolated(fax.from)],
        [t("job.to"), isolated((fax.to_all ?? []).join(", "))],
        [t("job.cc"), isolated((fax.cc ?? []).join(", "))],
        [t("job.subject"), isolated(fax.subject, "subject")],
        [t("job.providerId"), h("span", { class: "mono" }, fax.provider_email_id)],
        [t("fax.jobs"), isAdmin() && jobs.length
          ? h("ul", { class: "fax-jobs" }, jobs.map((j) => h("li", {}, jobLink(j.id), ` ${j.kind} `, h("span", { class: `badge state-${j.status}` }, t(`state.${j.status}`)))))
          : null],
      ]))),
    indexSection(fax.id, data, () => { void render(container, id); }),
    report,
    h("section", { class: "fax-documents" }, h("h3", {}, t("fax.documents")), viewerBox),
    h("details", { class: "fax-files" }, h("summary", {}, t("fax.files")), filesTable(attachments)),
    deletionSection(fax.id, data.retention, container)));
  if (!attachments.length) {
    replace(viewerBox, notice(t(fax.storing === "stored" ? "fax.noFiles" : "fax.notYet")));
    return;
  }
  mounted = mountViewer(viewerBox, {
    documents: attachments.map(viewerDocument),
    rotation: fax.rotation,
    label: t("fax.viewerLabel", { sender: title }),
    problem: problemText,
    // A clerk's or an admin's turn is remembered for everyone who opens the fax; a viewer turns it
    // for themselves.
    onRotate: canMark() ? async (rotation) => {
      try {
        await api(`faxes/${encodeURIComponent(fax.id)}/rotation`, { method: "POST", body: { rotation } });
      } catch (error) {
        replace(report, notice(problemText(error), "error"));
      }
    } : undefined,
  });
}
