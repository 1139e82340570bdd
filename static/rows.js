// richprogress: the rows of the live timeline, built from the spawner's records.
// Text reaches the DOM only through textContent / createElement / setAttribute: event and
// user text can hold anything (an image name "<img src=x onerror=alert(1)>").
//
// Event row (both pages; a div with role=listitem in a div with role=list; the failure
// page renders the same markup on the server, templates/richprogress/rows.html):
//   .rp-event[data-record-id][data-severity=info|warning|error] (.rp-decisive on the cause)
//     [data-show=quiet] (a muted one-line row; its Details button opens it, and sets
//                        [data-open=true]: richprogress/story/quieted.py says which)
// A record whose show is "hidden" gets no row (it is in "Copy details"), unless it is the
// cause: then it gets a row in full, as the cause's row always has.
//     .rp-when > .rp-clock ("+0:07", never earlier than the row above)
//                + .rp-last ("to +0:31", repeats only)
//                + time.rp-time[datetime] (the viewer's time, zone named: "11:46:28 PM PST";
//                  the failure page renders "07:46:28 UTC" and showLocalTimes rewrites it;
//                  title: the full local time and UTC, set when first looked at)
//     .rp-body > .rp-pills > .rp-pill.rp-pill-type (custom types only) / .rp-pill-word
//                            ("done", "retrying", "error": vocabulary.reasonWords; the
//                            event's reason is in the details) /
//                            .rp-pill-object, .rp-pill-container (only when not the
//                            user's own pod and main container) / .rp-count ("x4",
//                            count > 1) / .rp-pill-overcome (vocabulary.overcomePill) /
//                            .rp-pill-decisive ("the cause")
//             > .rp-message (the human sentence; a long name's pieces with <wbr> between,
//                            a piece that could break inside in span.rp-nobr)
//             > button.rp-details-toggle (rows of Kubernetes events; row-details.js)
// TimelineRows writes the rows of #progress-log once per animation frame (flush), then
// #progress-log fires "richprogress:rows" (detail.rows: the rows written, new or rebuilt).

import { attachDetails, displayText, formatCount } from "./row-details.js";
import { appendBreakable } from "./breaks.js";
import { formatClock, fullTime, localClockTime } from "./clock.js";

/** Types the row's colour already says, or that say nothing (our own messages). */
const QUIET_TYPES = new Set(["Normal", "Warning", "Custom", ""]);
/** KubeSpawner names the user's container "notebook" (kubespawner/objects.py, 7.1). */
const MAIN_CONTAINER = "notebook";
/** JupyterHub's own first message: the spawn's request, +0:00 by definition. */
export const SERVER_REQUESTED = "Server requested";

/**
 * How a record is shown (richprogress/story/quieted.py shown_as): "row", "quiet" or
 * "hidden"; the cause's row in full; a FailedScheduling quiet once a scale-up is in hand.
 * @param {EventRecord} record
 * @param {{scaleUp: boolean, decisive: boolean, quiet: ?{scaleUpReasons: Array<string>,
 *          answeredReasons: Array<string>}}} context
 * @returns {string}
 */
export function shownAs(record, context) {
  const own = ["quiet", "hidden"].includes(record.show) ? record.show : "row";
  if (context.decisive) return "row";
  const answered = context.quiet && context.quiet.answeredReasons.includes(record.reason) && record.phase !== "volume";
  if (own === "row" && context.scaleUp && answered) return "quiet";
  return own;
}

/** Whether a record says a machine is being added (story/quieted.py says_scale_up). */
function saysScaleUp(record, quiet) {
  return Boolean(quiet) && quiet.scaleUpReasons.includes(record.reason) && (record.severity ?? "info") === "info";
}

/**
 * The involved object of an event.
 * @typedef {Object} InvolvedObject
 * @property {?string} kind        e.g. "Pod"
 * @property {?string} name        e.g. "jupyter-alice"
 * @property {?string} container   container name, when the event is about one
 * @property {?string} field_path  e.g. "spec.containers{notebook}"
 */

/**
 * One event, as richprogress's formatter emits it (richprogress/model/records.py
 * EventRecord). Never HTML.
 * @typedef {Object} EventRecord
 * @property {string} id               stable identity; a repeat keeps its id (count grows)
 * @property {?string} timestamp       latest occurrence, ISO 8601 UTC ending in "Z"
 * @property {?string} first_timestamp first occurrence, same format
 * @property {string} type             "Normal", "Warning", or a custom type
 * @property {string} severity         one of vocabulary.severities
 * @property {?string} reason          e.g. "FailedScheduling"
 * @property {InvolvedObject} object   what the event is about
 * @property {?string} component       reporting component
 * @property {number} count            occurrences, >= 1
 * @property {string} message          the human sentence (plain text)
 * @property {string} raw_message      the event's own message
 * @property {?string} rule            id of the rule that produced message
 * @property {?string} [phase]         one of vocabulary.phases' names
 * @property {?string} [hint]          what the user can do
 * @property {?number} [since_spawn]   seconds from the spawn request to the event
 * @property {boolean} [overcome]      a problem the spawn got past
 * @property {string} [show]           "quiet" or "hidden" (absent: a plain row)
 */

/**
 * The page's data.vocabulary (richprogress/web/views/vocabulary.py): names and words Python owns.
 * @typedef {Object} Vocabulary
 * @property {Array<string>} severities
 * @property {Array<[string, string, number]>} phases  [name, label, progress percent]
 * @property {Object<string, string>} stepStates       the status line per phase
 * @property {Object<string, {show: Object, words: Object}>} verdicts  the verdict's table by state
 * @property {string} overcomePill                     the pill of a problem got past
 * @property {{severity: Object<string, string>, reason: Object<string, Object<string, string>>}}
 *           [reasonWords]  a row's pill word by severity, and by severity then reason
 * @property {{scaleUpReasons: Array<string>, answeredReasons: Array<string>}} [quiet]
 *           when a FailedScheduling row is quiet (richprogress/story/quieted.py)
 */

/** An element with a class and a text (never HTML). */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function objectLabel(obj) {
  if (!obj) return "";
  return [obj.kind, obj.name].filter(Boolean).join(" ");
}

/** A number of seconds, or null (as model/times.py finite_seconds reads it). */
function finiteSeconds(value) {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/**
 * Seconds from the spawn's start to a row: its first occurrence (model/times.py row_offset,
 * the same rule on the failure page). The smaller of the hub's reading (since_spawn, taken
 * when the event reached the hub, so never later than the page's clock) and the event's
 * first timestamp less the start (a repeat's first occurrence came before the reading of
 * its latest; a whole-second stamp is up to a second before the reading), each when known;
 * never negative. Both are the hub's and the cluster's times, never the browser's clock.
 * @param {EventRecord} record
 * @param {?string} started  the spawn's start (ISO 8601, hub clock, to the millisecond)
 * @returns {?number}
 */
export function rowOffset(record, started) {
  let since = finiteSeconds(record.since_spawn);
  if (started && record.first_timestamp) {
    const first = (Date.parse(record.first_timestamp) - Date.parse(started)) / 1000;
    if (Number.isFinite(first)) since = since === null ? first : Math.min(since, first);
  }
  return since === null ? null : Math.max(0, since);
}

/**
 * The since-spawn seconds and timestamp a row shows: its first occurrence. A row keeps the
 * place where its event first arrived while its count grows, so it shows when it began
 * (the list reads in order) and its badge says when it last happened.
 * @param {EventRecord} record
 * @param {?string} started
 * @returns {[?number, ?string]}
 */
export function rowMoment(record, started) {
  return [rowOffset(record, started), rowStamp(record)];
}

/** The wall time a row shows: its first occurrence. @param {EventRecord} record */
function rowStamp(record) {
  return record.first_timestamp || record.timestamp || null;
}

/**
 * The word on a row's pill (model/display.py row_word): how its event went, from the
 * page's vocabulary.reasonWords; "" for a row without a reason (the hub's own messages).
 * @param {EventRecord} record
 * @param {string} severity  the row's (one of vocabulary.severities)
 * @param {Vocabulary["reasonWords"]} words
 */
export function rowWord(record, severity, words) {
  const reason = record.reason;
  if (typeof reason !== "string" || !reason || !words) return "";
  const level = Object.hasOwn(words.severity, severity) ? severity : "info";
  const byReason = words.reason[level] || {};
  return (Object.hasOwn(byReason, reason) && byReason[reason]) || words.severity[level] || "";
}

/**
 * The pills worth showing (mirrors richprogress/web/views/rows.py shown_pills): the user's
 * own pod and main container are named once, not on every row; the type only when the
 * row's colour does not already say it.
 * @param {EventRecord} record
 * @param {?string} ownPod
 * @returns {{type: string, object: string, container: string}}
 */
export function shownPills(record, ownPod, mainContainer = MAIN_CONTAINER) {
  const obj = record.object || {};
  const own = obj.kind === "Pod" && ownPod !== null && ownPod !== undefined && obj.name === ownPod;
  const container = obj.container || "";
  const type = String(record.type || "");
  return {
    type: QUIET_TYPES.has(type) ? "" : type,
    object: own ? "" : objectLabel(obj),
    container: (own || ownPod === null || ownPod === undefined) && container === mainContainer ? "" : container,
  };
}

/**
 * The row's moment: its clock ("+0:07"), when a repeat last happened ("to +0:31") and its
 * wall time in the viewer's zone.
 * @param {EventRecord} record
 * @param {?number} since  the row's clock: rowOffset, never earlier than the row above
 * @param {?string} stamp  its first occurrence (ISO 8601)
 */
function whenSpan(record, since, stamp) {
  const when = el("span", "rp-when");
  when.append(el("span", "rp-clock", formatClock(since)));
  // a repeat that went on: when it last happened (the clock shows when it began); not for
  // an event seen once, whose stamp came before the hub's reading of it
  const lastClock = formatClock(record.since_spawn);
  const repeated = (Number(record.count) || 1) > 1;
  if (repeated && since !== null && lastClock && lastClock !== formatClock(since) && record.since_spawn > since) {
    when.append(el("span", "rp-last", `to ${lastClock}`));
  }
  if (stamp) {
    const time = el("time", "rp-time", localClockTime(stamp) || `${stamp.slice(11, 19)} UTC`);
    time.dateTime = stamp;
    // its title (the full local time and UTC) is set when first hovered: see titleTimesOnFirstLook
    when.append(time);
  }
  return when;
}

/**
 * Fill (or refill) one row from a record, at clock `since`; the row keeps its place in
 * the list.
 * @param {{started: ?string, ownPod: ?string, severities: Array<string>, overcomePill: string,
 *          reasonWords: Vocabulary["reasonWords"]}} view
 */
function fillRow(row, record, since, view) {
  const severity = view.severities.includes(record.severity) ? record.severity : "info";
  row.dataset.severity = severity;
  if (row.rpShow === "quiet") row.dataset.show = "quiet";
  else delete row.dataset.show;
  // a problem the spawn got past (richprogress/story/resolved.py): quiet, with its pill
  const overcome = record.overcome === true && severity !== "info";
  if (overcome) row.dataset.overcome = "true";
  else delete row.dataset.overcome;

  const when = whenSpan(record, since, rowStamp(record));
  const body = el("span", "rp-body");
  const pills = el("span", "rp-pills");
  const shown = shownPills(record, view.ownPod);
  if (shown.type) pills.append(el("span", "rp-pill rp-pill-type", displayText(shown.type, 200)));
  const word = rowWord(record, severity, view.reasonWords);
  if (word) pills.append(el("span", "rp-pill rp-pill-word", word));
  if (shown.object) pills.append(el("span", "rp-pill rp-pill-object", displayText(shown.object, 300)));
  if (shown.container) {
    pills.append(el("span", "rp-pill rp-pill-container", `container ${displayText(shown.container, 200)}`));
  }
  const count = Number(record.count) || 1;
  if (count > 1) {
    const badge = el("span", "rp-count", `x${formatCount(count)}`);
    const last = record.timestamp ? ` (${record.timestamp.slice(11, 19)} UTC)` : "";
    badge.title = `happened ${count} times, last at ${formatClock(record.since_spawn)}${last}`;
    pills.append(badge);
  }
  if (overcome) pills.append(el("span", "rp-pill rp-pill-overcome", view.overcomePill));
  if (row.classList.contains("rp-decisive")) {
    pills.append(el("span", "rp-pill rp-pill-decisive", "the cause"));
  }
  if (pills.childElementCount) body.append(pills);
  const text = displayText(record.message || record.raw_message || "");
  // a repeat (count grew) mostly keeps its sentence: keep its built text too
  let message = row.rpMessage;
  if (!message || row.rpText !== text) {
    message = el("span", "rp-message");
    appendBreakable(message, text);
    row.rpMessage = message;
    row.rpText = text;
  }
  body.append(message);
  // before the old body leaves the row: a refilled row keeps its Details button's focus
  const refocus = attachDetails(row, body, record, text, row.rpShow === "quiet");
  row.replaceChildren(when, body);
  if (refocus) refocus.focus();
}

/** The rows of #progress-log, keyed by record id, so repeats and replays update in place. */
export class TimelineRows {
  /**
   * @param {HTMLElement} log  #progress-log
   * @param {{started: ?string, ownPod: ?string, vocabulary: Vocabulary,
   *          onWritten: (spawnRows: number) => void}} options  onWritten: after each write,
   *          with the number of rows of the spawn (not the hub's "Server requested")
   */
  constructor(log, options) {
    this.log = log;
    this.view = {
      started: options.started,
      ownPod: options.ownPod,
      severities: options.vocabulary.severities,
      overcomePill: options.vocabulary.overcomePill,
      reasonWords: options.vocabulary.reasonWords,
      quiet: options.vocabulary.quiet || null,
    };
    // records shown as no row ("hidden"), by id: the cause may still be one of them
    this.hidden = new Map();
    // a record said a machine is being added: FailedScheduling rows are quiet from now on
    this.scaleUp = false;
    this.causeId = null;
    this.onWritten = options.onWritten;
    this.rows = new Map();
    // the rows in list order, each with its offset (rpOffset) and its clock (rpSince)
    this.order = [];
    // Rows waiting for the next animation frame: a replay of a long spawn (or a burst of
    // events) becomes one DOM write per frame, not one per event.
    this.queued = new Map();
    this.frame = null;
    this.spawnRows = 0;
  }

  /** Queue a record; rows are written on the next animation frame. @param {EventRecord} record */
  queue(record) {
    if (!this.scaleUp && saysScaleUp(record, this.view.quiet)) {
      this.scaleUp = true;
      // the FailedScheduling rows shown so far are answered now: refill them quiet
      const answered = this.view.quiet.answeredReasons;
      for (const row of this.rows.values()) {
        const shown = row.rpRecord;
        if (shown && answered.includes(shown.reason) && !this.queued.has(shown.id)) this.queued.set(shown.id, shown);
      }
    }
    if (!this.rows.has(record.id) && this.showOf(record) === "hidden") {
      this.hidden.set(record.id, record);
      this.queued.delete(record.id);
      return;
    }
    this.queued.set(record.id, record);
    if (this.frame === null) {
      this.frame = window.requestAnimationFrame(() => this.flush());
    }
  }

  /**
   * Rows the spawn got past (the event of the record that got past them names them):
   * refilled quiet, with the overcome pill, on the next frame like any change.
   * @param {Array<string>} ids
   */
  markResolved(ids) {
    for (const id of ids) {
      if (typeof id !== "string") continue;
      const record = this.queued.get(id) || this.rows.get(id)?.rpRecord;
      if (!record && this.hidden.has(id)) {
        this.hidden.set(id, { ...this.hidden.get(id), overcome: true });
        continue;
      }
      if (!record || record.overcome === true) continue;
      this.queued.set(id, { ...record, overcome: true });
    }
    if (this.queued.size && this.frame === null) {
      this.frame = window.requestAnimationFrame(() => this.flush());
    }
  }

  /** How a record's row shows now ("row", "quiet", "hidden"). @param {EventRecord} record */
  showOf(record) {
    return shownAs(record, { scaleUp: this.scaleUp, decisive: record.id === this.causeId, quiet: this.view.quiet });
  }

  /**
   * Write the queued rows: new rows go into one fragment appended once, existing rows are
   * refilled in place. No layout is read, and the work per row does not grow with the
   * number of rows already shown.
   *
   * A row's clock is its offset, never earlier than the clock of the row above, as the
   * failure page places them (web/views/rows.py row_floors): when a refilled row's clock
   * moves, the rows below it follow (their clock alone is rewritten).
   */
  flush() {
    if (this.frame !== null) window.cancelAnimationFrame(this.frame);
    this.frame = null;
    if (!this.queued.size) return;
    const fresh = document.createDocumentFragment();
    let from = this.order.length;
    let upTo = -1;
    for (const record of this.queued.values()) {
      let row = this.rows.get(record.id);
      if (!row) {
        row = el("div", "progress-log-event rp-event");
        row.setAttribute("role", "listitem");
        row.dataset.recordId = record.id;
        row.rpIndex = this.order.length;
        row.rpSince = undefined;
        this.order.push(row);
        this.rows.set(record.id, row);
        if (record.id !== `message:${SERVER_REQUESTED}`) this.spawnRows += 1;
        fresh.append(row);
      }
      row.rpRecord = record; // (a later "resolved" refills the row from it)
      // a row, once made, stays one ("hidden" later: quiet, rather than a row that vanishes)
      row.rpShow = this.showOf(record) === "row" ? "row" : "quiet";
      row.rpOffset = rowOffset(record, this.view.started);
      row.rpDirty = true;
      from = Math.min(from, row.rpIndex);
      upTo = Math.max(upTo, row.rpIndex);
    }
    this.place(from, upTo);
    const written = [...this.queued.keys()].map((id) => this.rows.get(id));
    this.queued.clear();
    this.log.append(fresh);
    // for modules that add to rows (a row is rebuilt whenever its record changes)
    this.log.dispatchEvent(new CustomEvent("richprogress:rows", { detail: { rows: written } }));
    this.onWritten(this.spawnRows);
  }

  /**
   * Give the rows from index `from` on their clocks, filling the changed ones (up to
   * `upTo`) and rewriting the clock of any other whose floor moved.
   */
  place(from, upTo) {
    const order = this.order;
    let floor = null;
    for (let i = from - 1; i >= 0 && floor === null; i--) floor = order[i].rpSince ?? null;
    for (let i = from; i < order.length; i++) {
      const row = order[i];
      const offset = row.rpOffset;
      const since = offset === null || floor === null ? offset : Math.max(offset, floor);
      if (row.rpDirty) {
        row.rpDirty = false;
        fillRow(row, row.rpRecord, since, this.view);
      } else if (since !== row.rpSince) {
        row.querySelector(".rp-when").replaceWith(whenSpan(row.rpRecord, since, rowStamp(row.rpRecord)));
      } else if (i > upTo) {
        break; // nothing changed from here on
      }
      row.rpSince = since;
      if (since !== null) floor = since;
    }
  }

  /** Mark the row of the cause, as the failure page does. @param {?string} recordId */
  markCause(recordId) {
    if (recordId) this.causeId = recordId;
    if (recordId && !this.rows.has(recordId) && this.hidden.has(recordId)) {
      // the cause was a hidden record: it gets its row, in full, now
      const record = this.hidden.get(recordId);
      this.hidden.delete(recordId);
      this.queue(record);
      this.flush();
    }
    const row = recordId ? this.rows.get(recordId) : undefined;
    if (!row || row.classList.contains("rp-decisive")) return;
    row.classList.add("rp-decisive");
    // the cause's row is shown in full, however quiet it was
    row.rpShow = "row";
    delete row.dataset.show;
    delete row.dataset.open;
    const pills = row.querySelector(".rp-pills");
    const pill = el("span", "rp-pill rp-pill-decisive", "the cause");
    if (pills) pills.append(pill);
    else {
      const holder = el("span", "rp-pills");
      holder.append(pill);
      row.querySelector(".rp-body").prepend(holder);
    }
  }
}

/**
 * Row times in the viewer's own zone, the zone named, for rows the hub rendered (the
 * failure page says "07:46:28 UTC" without JavaScript). The live page's rows are built so.
 * @param {HTMLElement} log  the list of rows
 */
export function showLocalTimes(log) {
  for (const time of log.querySelectorAll("time.rp-time")) {
    const local = localClockTime(time.dateTime);
    if (local) time.textContent = local;
  }
}

/**
 * A row time's title (the full local time with its zone, and UTC) is worked out when the
 * row is first hovered or focused, not for every row of a long timeline at load.
 * @param {HTMLElement} log  the list of rows
 */
export function titleTimesOnFirstLook(log) {
  const addTitle = (event) => {
    const time = event.target.closest && event.target.closest("time.rp-time");
    if (!time || time.dataset.localTitle) return;
    time.dataset.localTitle = "1";
    const title = fullTime(time.dateTime);
    if (title) time.title = title;
  };
  log.addEventListener("pointerover", addTitle);
  log.addEventListener("focusin", addTitle);
}
