// @ts-check
// Who is dealing with a fax: its state (未対応 new, 対応中 in progress with whom, 対応済み done), its
// note, and the one tap that moves it on (new → in progress, taken by the operator → done). A clerk
// or an admin marks; a viewer sees the state and the note, and no control. Opening a fax marks
// nothing: only a tap does. The server decides who may (POST /api/admin/faxes/<id>/handling); the
// control only mirrors it. Used on a job's page (job.js) and by the inbox, one per fax.

import { ApiError, api } from "./api.js";
import { h, replace } from "./dom.js";
import { dateTime, number, t } from "./i18n.js";
import { ask, canMark, codeMeaning, filterSummary, isolated, notice, problemText, shortId } from "./ui.js";

/** @typedef {"new" | "in_progress" | "done"} HandlingState */
/**
 * One mark of a fax, as the history keeps it.
 * @typedef {object} Mark
 * @property {string} at
 * @property {string | null} actor_email
 * @property {HandlingState} from
 * @property {HandlingState} to
 * @property {string | null} note the note given with the mark
 */
/**
 * A fax's handling (GET /api/admin/faxes/<id>/handling; the inbox's rows carry it without history).
 * @typedef {object} Handling
 * @property {string} fax_received_email_id
 * @property {HandlingState} state
 * @property {string | null} assignee_email who took it (in progress) or closed it (done)
 * @property {string | null} note
 * @property {string | null} updated_at
 * @property {Mark[]} [history] newest first
 */
/**
 * @typedef {object} ControlOptions
 * @property {boolean} [compact] a list's row: the state and the tap only (no note field, no history)
 * @property {boolean} [history] read the fax's marks and show them (a fax's own page)
 * @property {(handling: Handling) => void} [onChange] told of the fax's handling after a mark
 */
/**
 * POST /api/admin/handling/bulk: the faxes a bulk mark done would mark.
 * @typedef {{ bulk_action_id: string, fax_count: number, filter: Record<string, string | string[]> }} BulkDonePrepared
 */
/**
 * POST /api/admin/handling/bulk/<id>/apply: the bulk mark done's progress after one more batch.
 * @typedef {object} BulkDoneProgress
 * @property {number} processed
 * @property {number} changed
 * @property {number} skipped
 * @property {boolean} done
 * @property {Array<{ fax_received_email_id: string, reason: string }>} not_changed
 */

/** The tap's next state from each state: new → in progress → done. */
const NEXT = /** @type {Record<HandlingState, HandlingState | null>} */ ({ new: "in_progress", in_progress: "done", done: null });
/** The button's label for each state it marks. */
const BUTTON = /** @type {Record<HandlingState, string>} */ ({ new: "handling.reopen", in_progress: "handling.take", done: "handling.markDone" });

/**
 * The state in the page's language.
 * @param {HandlingState} state
 */
export function handlingLabel(state) {
  return t(`handling.${state}`);
}

/**
 * The state as a badge (its word and its shape; colour only helps).
 * @param {HandlingState} state
 */
export function handlingBadge(state) {
  return h("span", { class: `badge handling-${state}`, "data-handling": state }, handlingLabel(state));
}

/**
 * A fax's handling with its marks.
 * @param {string} faxId the fax's e-mail id
 * @returns {Promise<Handling>}
 */
export async function loadHandling(faxId) {
  return /** @type {Handling} */ (await api(`faxes/${encodeURIComponent(faxId)}/handling`));
}

/**
 * The control for one fax: its state, whose it is, and (for a clerk or an admin) the tap and the note.
 * @param {Handling} handling
 * @param {ControlOptions} [options]
 * @returns {HTMLElement}
 */
export function handlingControl(handling, options = {}) {
  const root = h("div", { class: `handling${options.compact ? " compact" : ""}`, "data-fax-id": handling.fax_received_email_id });
  draw(root, handling, options, null);
  if (options.history && !handling.history) addHistory(root, handling);
  return root;
}

/**
 * The fax's marks, read and added below a control already drawn (the state shows at once), unless
 * a mark has redrawn the control meanwhile: what an operator typed in the note stays.
 * @param {HTMLElement} root
 * @param {Handling} handling the drawn control's
 */
async function addHistory(root, handling) {
  const drawn = root.getAttribute("data-drawn");
  let fresh;
  try {
    fresh = await loadHandling(handling.fax_received_email_id);
  } catch {
    return; // the marks are a help: the control works without them
  }
  if (root.getAttribute("data-drawn") !== drawn || !fresh.history?.length) return;
  handling.history = fresh.history;
  root.append(history(fresh.history));
}

/**
 * A fax never marked, as the control shows it: new, nobody's.
 * @param {string} faxId
 * @returns {Handling}
 */
export function newHandling(faxId) {
  return { fax_received_email_id: faxId, state: "new", assignee_email: null, note: null, updated_at: null };
}

/**
 * Every fax a list's filter matches, marked done with one note: the count first, then the marks in
 * batches, as the other bulk actions (a clerk's too).
 * @param {"faxes" | "jobs"} scope whose filter: the inbox's, or the job list's (the faxes of its jobs)
 * @param {string} query the list's filter as the API takes it
 * @param {Element} report where the count, the progress and the outcome are told
 * @param {() => unknown} rerender the list again, once done
 */
export async function markAllDone(scope, query, report, rerender) {
  replace(report, notice(t("bulkDone.counting")));
  /** @type {BulkDonePrepared} */
  let prepared;
  try {
    prepared = /** @type {BulkDonePrepared} */ (await api("handling/bulk", { method: "POST", body: { scope, query } }));
  } catch (error) {
    replace(report, notice(problemText(error), "error"));
    return;
  }
  if (prepared.fax_count === 0) {
    replace(report, notice(t("bulkDone.nothing")));
    return;
  }
  const count = number(prepared.fax_count);
  const note = await ask({
    title: t("bulkDone.confirm", { count }),
    body: [h("p", {}, t(scope === "faxes" ? "bulkDone.snapshotFaxes" : "bulkDone.snapshot")),
      h("p", { class: "bulk-filter" }, t("bulk.filter", { filter: filterSummary(prepared.filter) || "—" }))],
    reasonLabel: t("bulkDone.note"),
    reasonRequired: true,
  });
  if (note === null) {
    replace(report);
    return;
  }
  /** @type {BulkDoneProgress} */
  let progress;
  try {
    do {
      progress = /** @type {BulkDoneProgress} */ (await api(`handling/bulk/${prepared.bulk_action_id}/apply`, { method: "POST", body: { note } }));
      replace(report, notice(t("bulkDone.applying", { processed: number(progress.processed), count,
        changed: number(progress.changed), skipped: number(progress.skipped) })));
    } while (!progress.done);
  } catch (error) {
    replace(report, notice(problemText(error), "error"));
    return;
  }
  replace(
    report,
    notice(t("bulkDone.done", { changed: number(progress.changed), count, skipped: number(progress.skipped) }), "success"),
    progress.not_changed.length
      ? h("details", { open: true }, h("summary", {}, t("bulkDone.notChanged")),
          h("ul", {}, progress.not_changed.map((item) => h("li", {},
            h("a", { href: `#/faxes/${encodeURIComponent(item.fax_received_email_id)}`, class: "mono" }, shortId(item.fax_received_email_id)),
            " — ", codeMeaning("refusal", item.reason)))))
      : null,
  );
  rerender();
}

/**
 * @param {HTMLElement} root
 * @param {Handling} handling
 * @param {ControlOptions} options
 * @param {import("./dom.js").Child} message what the last tap did
 */
function draw(root, handling, options, message) {
  root.setAttribute("data-drawn", String(Number(root.getAttribute("data-drawn") ?? 0) + 1));
  const marker = canMark();
  const status = h("div", { class: "handling-report", "aria-live": "polite" }, message);
  const facts = h("div", { class: "handling-state" },
    handlingBadge(handling.state), " ",
    handling.assignee_email && handling.state !== "new"
      ? h("span", { class: "handling-assignee" }, t("handling.assignee", { who: handling.assignee_email }))
      : null,
    !options.compact && handling.updated_at ? h("small", { class: "handling-updated" }, " ", t("handling.updated", { time: dateTime(handling.updated_at) })) : null);
  const note = !options.compact ? noteField(handling, marker) : null;

  /**
   * @param {HandlingState} state
   * @param {string | null} noteText null: the note stays as it is
   * @param {"handling.saved" | "handling.noteSaved"} said the message that says what was done
   */
  const mark = async (state, noteText, said) => {
    for (const button of root.querySelectorAll("button")) button.disabled = true;
    try {
      const answer = /** @type {{ changed: boolean, handling: Handling }} */ (await api(
        `faxes/${encodeURIComponent(handling.fax_received_email_id)}/handling`,
        { method: "POST", body: { state, from: handling.state, note: noteText } },
      ));
      const next = { ...answer.handling, history: handling.history };
      options.onChange?.(next);
      if (options.history || handling.history) {
        redraw(root, options, notice(t(said, { state: handlingLabel(state) }), "success"));
      } else draw(root, next, options, notice(t(said, { state: handlingLabel(state) }), "success"));
    } catch (error) {
      if (error instanceof ApiError && error.code === "handling_changed") {
        redraw(root, options, notice(t("handling.changed"), "warning"));
        return;
      }
      for (const button of root.querySelectorAll("button")) button.disabled = false;
      replace(status, notice(problemText(error), "error"));
    }
  };
  /** The note as typed when it differs from the fax's: sent with the tap. */
  const typedNote = () => {
    const field = note?.querySelector("textarea");
    if (!field) return null;
    const typed = field.value.trim();
    return typed === (handling.note ?? "") ? null : typed;
  };

  const next = NEXT[handling.state];
  const buttons = marker
    ? h("div", { class: "buttons handling-buttons" },
        next ? h("button", { type: "button", class: `primary handling-tap handling-to-${next}`,
          onclick: () => mark(next, typedNote(), "handling.saved") }, t(BUTTON[next])) : null,
        // Beside the tap, off a list's row: done at once from new, and back to new from done.
        !options.compact && handling.state === "new"
          ? h("button", { type: "button", class: "handling-to-done", onclick: () => mark("done", typedNote(), "handling.saved") }, t(BUTTON.done))
          : null,
        !options.compact && handling.state === "done"
          ? h("button", { type: "button", class: "handling-to-new", onclick: () => mark("new", typedNote(), "handling.saved") }, t(BUTTON.new))
          : null)
    : null;
  const save = marker && note
    ? h("button", { type: "button", class: "handling-save-note", onclick: () => {
        const typed = note.querySelector("textarea")?.value.trim() ?? "";
        mark(handling.state, typed, "handling.noteSaved");
      } }, t("handling.saveNote"))
    : null;
  replace(root,
    facts,
    note ? h("div", { class: "handling-note" }, note, save) : null,
    buttons,
    status,
    !options.compact && handling.history?.length ? history(handling.history) : null);
}

/**
 * The note: a field for a clerk or an admin, the text for a viewer.
 * @param {Handling} handling
 * @param {boolean} marker
 */
function noteField(handling, marker) {
  if (!marker) return handling.note ? h("p", { class: "handling-note-text" }, h("strong", {}, t("handling.note"), " "), isolated(handling.note)) : null;
  const field = h("textarea", { rows: 2, maxlength: 500, name: "handling-note", placeholder: t("handling.noteHint") });
  field.value = handling.note ?? "";
  return h("label", {}, t("handling.note"), field);
}

/**
 * A fax's handling read again (after a tap on a page that shows its history, or when someone else
 * marked it first), then drawn with the message.
 * @param {HTMLElement} root
 * @param {ControlOptions} options
 * @param {import("./dom.js").Child} message
 */
async function redraw(root, options, message) {
  const id = root.getAttribute("data-fax-id") ?? "";
  try {
    const fresh = await loadHandling(id);
    options.onChange?.(fresh);
    draw(root, fresh, options, message);
  } catch (error) {
    replace(root, notice(problemText(error), "error"));
  }
}

/** @param {Mark[]} marks newest first */
function history(marks) {
  return h("details", { class: "handling-history" },
    h("summary", {}, t("handling.history")),
    h("ol", {}, marks.map((m) => h("li", {},
      t("handling.historyEntry", { time: dateTime(m.at), who: m.actor_email ?? "", from: handlingLabel(m.from), to: handlingLabel(m.to) }),
      m.note ? [" — ", isolated(m.note)] : null))));
}
