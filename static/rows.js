// richprogress: the rows of the live timeline, built from the spawner's records.
// Text reaches the DOM only through textContent / createElement / setAttribute: event and
// user text can hold anything (an image name "<img src=x onerror=alert(1)>").
//
// Event row (both pages; a div with role=listitem in a div with role=list; the failure
// page renders the same markup on the server, templates/richprogress/rows.html):
//   .rp-event[data-record-id][data-severity=info|warning|error] (.rp-decisive on the cause)
//     .rp-when > .rp-clock ("+0:07", never earlier than the row above)
//                + .rp-last ("to +0:31", repeats only)
//                + time.rp-time[datetime] (UTC text, local time in title)
//     .rp-body > .rp-pills > .rp-pill.rp-pill-type (custom types only) / .rp-pill-reason /
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
import { formatClock, localTime } from "./clock.js";

/** Types the row's colour already says, or that say nothing (our own messages). */
const QUIET_TYPES = new Set(["Normal", "Warning", "Custom", ""]);
/** KubeSpawner names the user's container "notebook" (kubespawner/objects.py, 7.1). */
const MAIN_CONTAINER = "notebook";
/** JupyterHub's own first message: the spawn's request, +0:00 by definition. */
export const SERVER_REQUESTED = "Server requested";

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
 */

/**
 * The page's data.vocabulary (richprogress/web/views/vocabulary.py): names and words Python owns.
 * @typedef {Object} Vocabulary
 * @property {Array<string>} severities
 * @property {Array<[string, string, number]>} phases  [name, label, progress percent]
 * @property {Object<string, string>} stepStates       the status line per phase
 * @property {Object<string, string>} cannotContinueStates  the status line per live state
 *           that waiting cannot fix
 * @property {Array<string>} liveStates
 * @property {Object<string, string>} liveKickers      the live banner's first line
 * @property {Object<string, string>} liveStepStates   beside the step label
 * @property {string} overcomePill                     the pill of a problem got past
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

/**
 * The since-spawn seconds and timestamp a row shows: its first occurrence. A row keeps the
 * place where its event first arrived while its count grows, so it shows when it began
 * (the list reads in order) and its badge says when it last happened. A record seen once
 * keeps the spawner's since_spawn (finer than Kubernetes' whole seconds). Both times are
 * the hub's and the cluster's, never the browser's clock.
 * @param {EventRecord} record
 * @param {?string} started  the spawn's start (ISO 8601, hub clock)
 * @returns {[?number, ?string]}
 */
export function rowMoment(record, started) {
  const first = record.first_timestamp;
  if ((Number(record.count) || 1) > 1 && first && started) {
    const seconds = (Date.parse(first) - Date.parse(started)) / 1000;
    if (Number.isFinite(seconds)) return [Math.max(0, seconds), first];
  }
  return [record.since_spawn ?? null, record.timestamp || first || null];
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
 * Fill (or refill) one row from a record; the row keeps its place in the list.
 * `floor` is the clock of the row above: a row never reads earlier than it (Kubernetes
 * mixes whole-second and microsecond stamps, so a later event can truncate lower).
 * @param {{started: ?string, ownPod: ?string, severities: Array<string>, overcomePill: string}} view
 */
function fillRow(row, record, floor, view) {
  const severity = view.severities.includes(record.severity) ? record.severity : "info";
  row.dataset.severity = severity;
  // a problem the spawn got past (richprogress/story/resolved.py): quiet, with its pill
  const overcome = record.overcome === true && severity !== "info";
  if (overcome) row.dataset.overcome = "true";
  else delete row.dataset.overcome;

  const [moment, stamp] = rowMoment(record, view.started);
  const since = moment === null || floor === null ? moment : Math.max(moment, floor);
  const when = el("span", "rp-when");
  when.append(el("span", "rp-clock", formatClock(since)));
  // a repeat that went on: when it last happened (the clock shows when it began)
  const lastClock = formatClock(record.since_spawn);
  if (since !== null && lastClock && lastClock !== formatClock(since) && record.since_spawn > since) {
    when.append(el("span", "rp-last", `to ${lastClock}`));
  }
  if (stamp) {
    const time = el("time", "rp-time", stamp.slice(11, 19));
    time.dateTime = stamp;
    // its title (local time) is set when first hovered: see titleTimesOnFirstLook
    when.append(time);
  }

  const body = el("span", "rp-body");
  const pills = el("span", "rp-pills");
  const shown = shownPills(record, view.ownPod);
  if (shown.type) pills.append(el("span", "rp-pill rp-pill-type", displayText(shown.type, 200)));
  if (record.reason) pills.append(el("span", "rp-pill rp-pill-reason", displayText(record.reason, 200)));
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
  const refocus = attachDetails(row, body, record, text);
  row.replaceChildren(when, body);
  if (refocus) refocus.focus();
  return since;
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
    };
    this.onWritten = options.onWritten;
    this.rows = new Map();
    // Rows waiting for the next animation frame: a replay of a long spawn (or a burst of
    // events) becomes one DOM write per frame, not one per event.
    this.queued = new Map();
    this.frame = null;
    // the clock of the last row in the list: no row below reads earlier
    this.lastClock = null;
    this.spawnRows = 0;
  }

  /** Queue a record; rows are written on the next animation frame. @param {EventRecord} record */
  queue(record) {
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
      if (!record || record.overcome === true) continue;
      this.queued.set(id, { ...record, overcome: true });
    }
    if (this.queued.size && this.frame === null) {
      this.frame = window.requestAnimationFrame(() => this.flush());
    }
  }

  /**
   * Write the queued rows: new rows go into one fragment appended once, existing rows are
   * refilled in place. No layout is read, and the work per row does not grow with the
   * number of rows already shown.
   */
  flush() {
    if (this.frame !== null) window.cancelAnimationFrame(this.frame);
    this.frame = null;
    if (!this.queued.size) return;
    const fresh = document.createDocumentFragment();
    for (const record of this.queued.values()) {
      let row = this.rows.get(record.id);
      if (row) {
        row.rpRecord = record;
        fillRow(row, record, row.rpFloor, this.view);
        continue;
      }
      row = el("div", "progress-log-event rp-event");
      row.setAttribute("role", "listitem");
      row.dataset.recordId = record.id;
      row.rpFloor = this.lastClock;
      row.rpRecord = record; // (a later "resolved" refills the row from it)
      this.rows.set(record.id, row);
      if (record.id !== `message:${SERVER_REQUESTED}`) this.spawnRows += 1;
      const clock = fillRow(row, record, row.rpFloor, this.view);
      if (clock !== null && clock !== undefined) this.lastClock = clock;
      fresh.append(row);
    }
    const written = [...this.queued.keys()].map((id) => this.rows.get(id));
    this.queued.clear();
    this.log.append(fresh);
    // for modules that add to rows (a row is rebuilt whenever its record changes)
    this.log.dispatchEvent(new CustomEvent("richprogress:rows", { detail: { rows: written } }));
    this.onWritten(this.spawnRows);
  }

  /** Mark the row of the cause, as the failure page does. @param {?string} recordId */
  markCause(recordId) {
    const row = recordId ? this.rows.get(recordId) : undefined;
    if (!row || row.classList.contains("rp-decisive")) return;
    row.classList.add("rp-decisive");
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
 * A row's local time (the title of its UTC time) is worked out when the row is first
 * hovered or focused, not for every row of a long timeline at load.
 * @param {HTMLElement} log  the list of rows
 */
export function titleTimesOnFirstLook(log) {
  const addTitle = (event) => {
    const time = event.target.closest && event.target.closest("time.rp-time");
    if (!time || time.dataset.localTitle) return;
    time.dataset.localTitle = "1";
    const local = localTime(time.dateTime);
    if (local) time.title = `${local} (your time)`;
  };
  log.addEventListener("pointerover", addTitle);
  log.addEventListener("focusin", addTitle);
}
