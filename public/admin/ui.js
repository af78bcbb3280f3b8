// Pieces every view uses: state badges, notices, links, the operator, and refusals shown as text.

import { ApiError } from "./api.js";
import { h } from "./dom.js";
import { t } from "./i18n.js";

let who = null;

export function setOperator(operator) {
  who = operator;
}

export function operator() {
  return who;
}

export function isAdmin() {
  return who?.role === "admin";
}

export function stateBadge(state) {
  return h("span", { class: `badge state-${state}` }, t(`state.${state}`));
}

export function jobLink(id, text) {
  return h("a", { href: `#/jobs/${encodeURIComponent(id)}`, class: "mono" }, text ?? id.slice(0, 8));
}

export function notice(text, kind = "info") {
  return h("p", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}

/** What a failed call says to the operator: the server's refusal as text, or that it was unreachable. */
export function problemText(error) {
  if (error instanceof ApiError) {
    if (error.code === "not_admin") return t("common.notAdmin");
    return t("common.error", { message: error.message || error.code });
  }
  return t("common.network");
}

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

/** A modal dialog; resolves with the reason typed (or true without a reason field), null when dismissed. */
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
