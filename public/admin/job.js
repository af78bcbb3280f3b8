// @ts-check
// A job: its facts and actions, its e-mail, its attachments (downloads through signed URLs valid
// for a minute), and its attempts as a timeline.

import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { handlingControl, loadHandling } from "./handling.js";
import { bytes, dateTime, duration, t } from "./i18n.js";
import { ask, definitions, explanation, isAdmin, isolated, notice, operator, problemText, retryCannotHelp, stackedTable, stateBadge } from "./ui.js";

/** @typedef {import("./dom.js").Child} Child */
/**
 * A job, as the list and the job's page show it.
 * @typedef {object} Job
 * @property {string} id
 * @property {string} kind
 * @property {string} status queued, running, failed or completed
 * @property {number} attempts
 * @property {number} max_attempts
 * @property {string} created_at
 * @property {string} run_after
 * @property {string | null} finished_at
 * @property {string | null} last_error_code
 * @property {string | null} last_error_message
 */
/**
 * The e-mail a job came from.
 * @typedef {object} Email
 * @property {string} id the fax's: its handling is marked by it
 * @property {string | null} from
 * @property {string[] | null} to
 * @property {string[] | null} cc
 * @property {string | null} subject
 * @property {string} received_at
 * @property {string} provider_email_id
 * @property {string | null} message_id
 * @property {"webhook" | "reconciliation"} found_by who recorded it: its webhook, or reconciliation (Resend listed it)
 * @property {string | null} reconciled_at when reconciliation recorded it
 */
/**
 * @typedef {object} Attachment
 * @property {string} id
 * @property {string | null} filename the sender's
 * @property {string} download_name what it is shown and downloaded as (lib/attachment_names.py)
 * @property {string | null} content_type
 * @property {number | null} size_bytes
 * @property {string | null} sha256
 */
/**
 * One attempt at a job; a running one has no outcome and no duration yet.
 * @typedef {object} Attempt
 * @property {number} attempt
 * @property {number} generation
 * @property {string | null} started_at
 * @property {string | null} outcome
 * @property {number | null} duration_ms
 * @property {string | null} error_code
 * @property {string | null} error_message
 * @property {string | null} invocation_id
 */
/** @typedef {{ job: Job, email: Email | null, attachments: Attachment[], attempts: Attempt[] }} JobDetail GET /api/admin/jobs/<id> */

/**
 * @param {Job} job
 * @param {Element} report where an action's outcome is told
 * @param {(message?: Child) => Promise<void>} rerender the page again, with this message
 */
function actions(job, report, rerender) {
  const admin = isAdmin();
  // Where the advice says a retry cannot help (the provider no longer has the e-mail, the same file
  // gives the same result), none is offered: the fax is closed by marking it done instead.
  const hopeless = job.status === "failed" && retryCannotHelp(job.last_error_code);
  const retry = job.status === "failed" && !hopeless
    ? h("button", { type: "button", class: "primary job-retry", disabled: !admin, onclick: async () => {
        try {
          await api(`jobs/${job.id}/retry`, { method: "POST", body: {} });
          await rerender(notice(t("job.retried"), "success"));
        } catch (error) {
          replace(report, notice(problemText(error), "error"));
        }
      } }, t("job.retry"))
    : null;
  const cancel = ["queued", "running"].includes(job.status)
    ? h("button", { type: "button", class: "job-cancel", disabled: !admin, onclick: async () => {
        const reason = await ask({ title: t("job.cancel"), reasonLabel: t("job.cancelReason"), reasonRequired: true });
        if (reason === null) return;
        try {
          await api(`jobs/${job.id}/cancel`, { method: "POST", body: { reason } });
          await rerender(notice(t("job.cancelled"), "success"));
        } catch (error) {
          replace(report, notice(problemText(error), "error"));
        }
      } }, t("job.cancel"))
    : null;
  const hint = admin ? null : t(operator()?.role === "clerk" ? "jobs.clerkHint" : "jobs.viewerHint");
  return h("div", { class: "buttons" }, retry, cancel,
    hopeless ? h("small", { class: "hint retry-cannot-help" }, t("job.retryCannotHelp")) : null,
    hint ? h("small", { class: "hint" }, hint) : null);
}

/**
 * @param {Attachment[]} attachments
 * @param {Element} report where a refused download is told
 * @param {boolean} finished the job failed or completed: nothing more will be stored ("yet" would mislead)
 */
function attachmentsTable(attachments, report, finished) {
  if (!attachments.length) return h("p", {}, t(finished ? "job.noAttachmentsFinished" : "job.noAttachments"));
  const download = (/** @type {Attachment} */ attachment) => async () => {
    try {
      const { url } = /** @type {{ url: string }} */ (await api(`attachments/${attachment.id}/download`, { method: "POST", body: {} }));
      window.location.assign(url); // a navigation (Content-Disposition: attachment), not a fetch
    } catch (error) {
      replace(report, notice(problemText(error), "error"));
    }
  };
  return stackedTable(h(
    "table",
    { class: "attachments" },
    h("thead", {}, h("tr", {}, ["job.name", "job.type", "job.size", "job.sha256", "job.actions"].map((k) => h("th", { scope: "col" }, t(k))))),
    h("tbody", {}, attachments.map((a) => h("tr", {},
      h("td", { class: "filename" }, isolated(a.download_name)),
      h("td", { class: "mono" }, a.content_type ?? ""),
      h("td", { class: "number" }, bytes(a.size_bytes)),
      h("td", { class: "mono hash" }, a.sha256),
      h("td", {}, h("button", { type: "button", class: "download", onclick: download(a), title: t("job.downloadHint") }, t("job.download")))))),
  ));
}

/**
 * How many retries came before each attempt: a retry starts the job's attempt counter again, so an
 * attempt whose number does not follow the one before it (oldest first) is the first after a retry.
 * @param {Attempt[]} attempts oldest first
 */
export function retriesBefore(attempts) {
  let retries = 0;
  return attempts.map((a, index) => {
    if (index > 0 && a.attempt <= attempts[index - 1].attempt) retries += 1;
    return retries;
  });
}

/**
 * How the e-mail was recorded: by its webhook, or found by reconciliation (no webhook delivered it;
 * Resend's list of received e-mails had it), and when.
 * @param {Email} email
 */
export function foundBy(email) {
  if (email.found_by === "reconciliation") {
    return h("span", { class: "found-by-reconciliation" }, t("job.foundByReconciliation", { time: dateTime(email.reconciled_at) }));
  }
  return t("job.foundByWebhook");
}

/** @param {Attempt[]} attempts oldest first */
function timeline(attempts) {
  if (!attempts.length) return h("p", {}, t("job.noAttempts"));
  const retries = retriesBefore(attempts);
  return h(
    "ol",
    { class: "timeline" },
    attempts.map((a, index) => h(
      "li",
      { class: `attempt outcome-${a.outcome}` },
      h("div", { class: "attempt-head" },
        h("strong", {}, t("attempt.title", { n: index + 1 })), " ",
        retries[index] ? h("small", { class: "hint" }, t("attempt.afterRetry", { retry: retries[index] }), " ") : null,
        h("span", { class: `badge outcome-${a.outcome}` }, t(`outcome.${a.outcome}`))),
      h("div", { class: "attempt-meta" },
        a.started_at ? t("attempt.started", { time: dateTime(a.started_at) }) : "", " · ",
        a.duration_ms !== null ? t("attempt.took", { duration: duration(a.duration_ms / 1000) }) : ""),
      a.error_code ? h("div", { class: "attempt-error" }, explanation("job", a.error_code, { message: a.error_message, advice: false })) : null,
      a.invocation_id ? h("div", { class: "attempt-meta mono" }, t("attempt.invocation", { id: a.invocation_id })) : null,
    )),
  );
}

/**
 * @param {Element} container
 * @param {string} id the job's
 */
export async function render(container, id) {
  const report = h("div", { class: "job-report", "aria-live": "polite" });
  /** @type {(message?: Child) => Promise<void>} */
  const draw = async (message) => {
    /** @type {JobDetail} */
    let data;
    try {
      data = /** @type {JobDetail} */ (await api(`jobs/${encodeURIComponent(id)}`));
    } catch (error) {
      replace(container, h("p", {}, h("a", { href: "#/jobs" }, t("job.back"))), notice(problemText(error), "error"));
      return;
    }
    const { job, email, attachments, attempts } = data;
    replace(report, message ?? null);
    const handling = h("section", { class: "handling-section" }, h("h3", {}, t("handling.heading")),
      email ? notice(t("common.loading")) : h("p", {}, t("handling.noFax")));
    replace(
      container,
      h("div", { class: "job-view" },
        h("p", {}, h("a", { href: "#/jobs" }, t("job.back"))),
        h("h2", {}, t("job.heading", { id: job.id }), " ", stateBadge(job.status)),
        actions(job, report, draw),
        report,
        handling,
        h("div", { class: "columns" },
          h("section", {}, h("h3", {}, t("job.facts")), definitions([
            [t("column.kind"), job.kind],
            [t("column.attempts"), `${job.attempts}/${job.max_attempts}`],
            [t("job.created"), dateTime(job.created_at)],
            [t("job.runAfter"), job.status === "queued" ? dateTime(job.run_after) : null],
            [t("job.finished"), dateTime(job.finished_at)],
            [t("job.lastError"), job.last_error_code ? explanation("job", job.last_error_code, { message: job.last_error_message }) : null],
          ])),
          email ? h("section", {}, h("h3", {}, t("job.email")), definitions([
            [t("job.from"), isolated(email.from)],
            [t("job.to"), isolated((email.to ?? []).join(", "))],
            [t("job.cc"), isolated((email.cc ?? []).join(", "))],
            [t("job.subject"), isolated(email.subject, "subject")],
            [t("job.receivedAt"), dateTime(email.received_at)],
            [t("job.providerId"), h("span", { class: "mono" }, email.provider_email_id)],
            [t("job.messageId"), email.message_id ? h("span", { class: "mono" }, email.message_id) : null],
            [t("job.foundBy"), foundBy(email)],
          ])) : null),
        h("section", {}, h("h3", {}, t("job.attachments")), attachmentsTable(attachments, report, job.status === "failed" || job.status === "completed")),
        h("section", {}, h("h3", {}, t("job.attempts")), timeline(attempts))),
    );
    if (email) await drawHandling(handling, email.id);
  };
  replace(container, notice(t("common.loading")));
  await draw();
}

/**
 * Who is dealing with the job's fax, once the job's page is drawn: a clerk or an admin marks it
 * there (handling.js); a viewer reads it.
 * @param {Element} section
 * @param {string} faxId
 */
async function drawHandling(section, faxId) {
  const slot = section.lastElementChild;
  if (!slot) return;
  try {
    slot.replaceWith(handlingControl(await loadHandling(faxId)));
  } catch (error) {
    slot.replaceWith(notice(problemText(error), "error"));
  }
}
