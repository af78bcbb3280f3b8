// A job: its facts and actions, its e-mail, its attachments (downloads through signed URLs valid
// for a minute), and its attempts as a timeline.

import { api } from "./api.js";
import { h, replace } from "./dom.js";
import { bytes, dateTime, duration, t } from "./i18n.js";
import { ask, definitions, isAdmin, notice, problemText, stateBadge } from "./ui.js";

function actions(job, report, rerender) {
  const admin = isAdmin();
  const retry = job.status === "failed"
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
  return h("div", { class: "buttons" }, retry, cancel, admin ? null : h("small", { class: "hint" }, t("jobs.viewerHint")));
}

function attachmentsTable(attachments, report) {
  if (!attachments.length) return h("p", {}, t("job.noAttachments"));
  const download = (attachment) => async () => {
    try {
      const { url } = await api(`attachments/${attachment.id}/download`, { method: "POST", body: {} });
      window.location.assign(url); // a navigation (Content-Disposition: attachment), not a fetch
    } catch (error) {
      replace(report, notice(problemText(error), "error"));
    }
  };
  return h(
    "table",
    { class: "attachments" },
    h("thead", {}, h("tr", {}, ["job.name", "job.type", "job.size", "job.sha256", ""].map((k) => h("th", { scope: "col" }, k ? t(k) : "")))),
    h("tbody", {}, attachments.map((a) => h("tr", {},
      h("td", { class: "filename" }, a.filename ?? "—"),
      h("td", { class: "mono" }, a.content_type ?? ""),
      h("td", { class: "number" }, bytes(a.size_bytes)),
      h("td", { class: "mono hash" }, a.sha256),
      h("td", {}, h("button", { type: "button", class: "download", onclick: download(a), title: t("job.downloadHint") }, t("job.download")))))),
  );
}

function timeline(attempts) {
  if (!attempts.length) return h("p", {}, t("job.noAttempts"));
  return h(
    "ol",
    { class: "timeline" },
    attempts.map((a) => h(
      "li",
      { class: `attempt outcome-${a.outcome}` },
      h("div", { class: "attempt-head" },
        h("strong", {}, t("attempt.title", { attempt: a.attempt, generation: a.generation })), " ",
        h("span", { class: `badge outcome-${a.outcome}` }, t(`outcome.${a.outcome}`))),
      h("div", { class: "attempt-meta" },
        a.started_at ? t("attempt.started", { time: dateTime(a.started_at) }) : "", " · ",
        a.duration_ms !== null ? t("attempt.took", { duration: duration(a.duration_ms / 1000) }) : ""),
      a.error_code ? h("div", { class: "attempt-error" }, h("span", { class: "mono" }, a.error_code), " ", a.error_message ?? "") : null,
      a.invocation_id ? h("div", { class: "attempt-meta mono" }, t("attempt.invocation", { id: a.invocation_id })) : null,
    )),
  );
}

export async function render(container, id) {
  const report = h("div", { class: "job-report", "aria-live": "polite" });
  const draw = async (message) => {
    let data;
    try {
      data = await api(`jobs/${encodeURIComponent(id)}`);
    } catch (error) {
      replace(container, h("p", {}, h("a", { href: "#/jobs" }, t("job.back"))), notice(problemText(error), "error"));
      return;
    }
    const { job, email, attachments, attempts } = data;
    replace(report, message ?? null);
    replace(
      container,
      h("div", { class: "job-view" },
        h("p", {}, h("a", { href: "#/jobs" }, t("job.back"))),
        h("h2", {}, t("job.heading", { id: job.id }), " ", stateBadge(job.status)),
        actions(job, report, draw),
        report,
        h("div", { class: "columns" },
          h("section", {}, h("h3", {}, t("job.facts")), definitions([
            [t("column.kind"), job.kind],
            [t("column.attempts"), `${job.attempts}/${job.max_attempts}`],
            [t("job.created"), dateTime(job.created_at)],
            [t("job.runAfter"), job.status === "queued" ? dateTime(job.run_after) : null],
            [t("job.finished"), dateTime(job.finished_at)],
            [t("job.lastError"), job.last_error_code ? [h("span", { class: "mono" }, job.last_error_code), " ", job.last_error_message ?? ""] : null],
          ])),
          email ? h("section", {}, h("h3", {}, t("job.email")), definitions([
            [t("job.from"), email.from],
            [t("job.to"), (email.to ?? []).join(", ")],
            [t("job.cc"), (email.cc ?? []).join(", ")],
            [t("job.subject"), h("span", { class: "subject" }, email.subject ?? "")],
            [t("job.receivedAt"), dateTime(email.received_at)],
            [t("job.providerId"), h("span", { class: "mono" }, email.provider_email_id)],
            [t("job.messageId"), email.message_id ? h("span", { class: "mono" }, email.message_id) : null],
          ])) : null),
        h("section", {}, h("h3", {}, t("job.attachments")), attachmentsTable(attachments, report)),
        h("section", {}, h("h3", {}, t("job.attempts")), timeline(attempts))),
    );
  };
  replace(container, notice(t("common.loading")));
  await draw();
}
