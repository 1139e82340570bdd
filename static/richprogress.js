// richprogress: the live spawn timeline (spawn_pending.html) and the failure page's few
// interactive bits (not_running.html). An ES module, shipped as is (no build step).
//
// Text reaches the DOM only through textContent / createElement / setAttribute: event
// and user text can hold anything (an image name "<img src=x onerror=alert(1)>").
//
// DOM contract (ids and classes other code and the browser tests rely on):
//
//   Data      script#richprogress-data   JSON from Python (|tojson); .page = "pending" | "failed"
//   Pending page (keeps JupyterHub's stock contract):
//     #progress-bar          .progress-bar, aria-valuenow = percent; .bg-danger once failed
//     #sr-progress           "NN%" for screen readers
//     #rp-sr-state           "Complete", "failed" once failed (the bar's label says so too)
//     #progress-message      the current step's state (STEP_STATES); a stock spawner's
//                            latest message when the stream carries no records
//     #progress-details      <details> around the log (open)
//     #progress-log          div[role=list]; one div.progress-log-event.rp-event
//                            [role=listitem] per record (stock row element and class)
//     Rows are written once per animation frame (PendingPage.flush), then #progress-log
//     fires "richprogress:rows" (detail.rows: the rows written, new or rebuilt).
//   First inline script of the body: window.richprogressOpenProgress() opens the stream
//     (it names the progress URL and EventSource, as the stock page's first script does)
//     #stop-server-btn       stops the server (DELETE on the server API); #stop-server-status
//     #rp-title              the heading ("Starting your server", then "... could not start")
//     #rp-lead               "You will be redirected ..." (hidden once failed)
//     #rp-step               current step label, aria-live="polite"
//     #rp-elapsed            "m:ss" since the user clicked Start (server time + monotonic clock);
//                            once failed "30 s" after #rp-elapsed-label "Gave up after"
//     #rp-event-count        "(N events)": rows of the spawn, not the hub's "Server requested"
//     #rp-failure            alert shown on the stream's "failed" message, holding
//                            #rp-failure-summary, #rp-failure-hint, a#rp-failure-link
//   Event row (both pages; a div with role=listitem in a div with role=list):
//     .rp-event[data-record-id][data-severity=info|warning|error] (.rp-decisive on the cause)
//       .rp-when > .rp-clock ("+0:07", never earlier than the row above)
//                  + .rp-last ("to +0:31", repeats only)
//                  + time.rp-time[datetime] (UTC text, local time in title)
//       .rp-body > .rp-pills > .rp-pill.rp-pill-type (custom types only) / .rp-pill-reason /
//                              .rp-pill-object, .rp-pill-container (only when not the
//                              user's own pod and main container) / .rp-count ("x4",
//                              count > 1) / .rp-pill-decisive ("the cause")
//               > .rp-message (the human sentence; a long name's pieces with <wbr> between,
//                              a piece that could break inside in span.rp-nobr)
//               > button.rp-details-toggle (rows of Kubernetes events; row-details.js)
//     .rp-fold               records folded out of view (failure page)
//   Failure page:
//     #rp-summary, #rp-hint, #rp-facts, #rp-timeline, a#start (Relaunch, stock id),
//     #rp-copy (Copy details; hidden without JS), #rp-copy-status, pre#rp-report
//     time.rp-local          UTC time; this module appends the local time
//   Readiness: window._jupyterhub_page_loaded = true and body[data-richprogress="ready"]
//              once the module has set the page up.
//   Test hook: window.richprogressPage.reconnect() (pending page) closes the event stream
//              and opens a new one; the hub replays the spawn, rows must not double.

import { attachDetails, displayText, formatCount, listenForToggles, wireRenderedDetails } from "./row-details.js";
import { LiveBanner } from "./live-diagnosis.js";
import { TypicalLine } from "./typical-times.js";
import { appendBreakable, headlineParts } from "./breaks.js";
// spawn history (issue 10): say "Lost contact with the hub" instead of ticking forever
import { ContactWatch } from "./connection.js";

// -- the vocabulary: must equal richprogress/records.py (tests/test_vocabulary_js.py) ----
export const SEVERITIES = ["info", "warning", "error"];
export const PHASES = [
  ["requested", "Requesting a server", 0],
  ["scheduling", "Finding a machine to run it", 10],
  ["scaling", "Adding a machine to the cluster", 20],
  ["scheduled", "Machine found", 35],
  ["volume", "Preparing storage", 45],
  ["image", "Downloading the software image", 55],
  ["starting", "Starting the server", 80],
  ["ready", "Server ready", 100],
];
// -- end of vocabulary ------------------------------------------------------------------

/** The status line under the bar: what the step is doing, not the newest (maybe alarming
 * but harmless) event. */
export const STEP_STATES = {
  requested: "The hub is asking the cluster for a server.",
  scheduling: "The cluster is looking for a machine with room for your server.",
  scaling: "The cluster is adding a machine for your server; this often takes a few minutes.",
  scheduled: "A machine was found for your server.",
  volume: "Your storage is being prepared.",
  image: "The software image is downloading to the machine; large images take a few minutes.",
  starting: "The server is starting.",
  ready: "Your server is ready.",
};

/** The status line while the live banner says waiting cannot fix the cause: the step's own
 * words ("this often takes a few minutes") would promise that waiting ends it. */
export const CANNOT_CONTINUE_STATES = {
  hopeless: "Waiting will not get past this: the reason is below.",
  stopped: "The spawn was stopped: the reason is below.",
};

/** The pill of a problem row the spawn got past (templates/richprogress/rows.html says the same). */
export const OVERCOME_PILL = "resolved";

/** Types the row's colour already says, or that say nothing (our own messages). */
const QUIET_TYPES = new Set(["Normal", "Warning", "Custom", ""]);
/** KubeSpawner names the user's container "notebook" (kubespawner/objects.py, 7.1). */
const MAIN_CONTAINER = "notebook";
/** JupyterHub's own first message: the spawn's request, +0:00 by definition. */
const SERVER_REQUESTED = "Server requested";

const PHASE_LABELS = new Map(PHASES.map(([name, label]) => [name, label]));
const PHASE_ORDER = new Map(PHASES.map(([name], index) => [name, index]));

/**
 * The involved object of an event.
 * @typedef {Object} InvolvedObject
 * @property {?string} kind        e.g. "Pod"
 * @property {?string} name        e.g. "jupyter-alice"
 * @property {?string} container   container name, when the event is about one
 * @property {?string} field_path  e.g. "spec.containers{notebook}"
 */

/**
 * One event, as richprogress's formatter emits it (DESIGN.md contract 1). Never HTML.
 * @typedef {Object} EventRecord
 * @property {string} id               stable identity; a repeat keeps its id (count grows)
 * @property {?string} timestamp       latest occurrence, ISO 8601 UTC ending in "Z"
 * @property {?string} first_timestamp first occurrence, same format
 * @property {string} type             "Normal", "Warning", or a custom type
 * @property {string} severity         one of SEVERITIES
 * @property {?string} reason          e.g. "FailedScheduling"
 * @property {InvolvedObject} object   what the event is about
 * @property {?string} component       reporting component
 * @property {number} count            occurrences, >= 1
 * @property {string} message          the human sentence (plain text)
 * @property {string} raw_message      the event's own message
 * @property {?string} rule            id of the rule that produced message
 * @property {?string} [phase]         one of PHASES' names
 * @property {?string} [hint]          what the user can do
 * @property {?number} [since_spawn]   seconds from the spawn request to the event
 */

/**
 * One message of JupyterHub's progress event stream.
 * @typedef {Object} ProgressEvent
 * @property {number} [progress]  0-100
 * @property {string} [message]   plain text
 * @property {EventRecord} [record]
 * @property {boolean} [ready]
 * @property {boolean} [failed]
 * @property {string} [url]
 * @property {?import("./live-diagnosis.js").LiveDiagnosis} [diagnosis]  the live cause, when
 *           it changed (null: cleared); shown by live-diagnosis.js
 * @property {Array<string>} [resolved]  ids of earlier problem rows this event's record got
 *           past (richprogress/resolved.py): shown quiet, with a "resolved" pill
 */

/** "+m:ss" (or "+h:mm:ss") since the spawn started; "" when unknown. */
export function formatClock(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "";
  return "+" + formatElapsed(seconds);
}

/** "7 s", "2 min 31 s", "1 h 02 min" (richprogress/report.py format_duration); "" if unknown. */
export function formatDuration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "";
  // Python's round() halves to even; the hub's figures are milliseconds apart from .5
  const total = Math.max(0, Math.round(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h) return `${h} h ${String(m).padStart(2, "0")} min`;
  if (m) return `${m} min ${String(s).padStart(2, "0")} s`;
  return `${s} s`;
}

/** "m:ss" (or "h:mm:ss"). */
export function formatElapsed(seconds) {
  const total = Math.max(0, Math.floor(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

// One formatter for the page: toLocaleString() builds a new one per call, which made
// rendering a long timeline slow (about a third of a millisecond per row).
let localFormat = null;

function localTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  if (localFormat === null) {
    localFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
  }
  return localFormat.format(date);
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
 * The pills worth showing (mirrors richprogress/row_text.py shown_pills): the user's own
 * pod and main container are named once, not on every row; the type only when the row's
 * colour does not already say it.
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
 */
function fillRow(row, record, started, floor, ownPod) {
  const severity = SEVERITIES.includes(record.severity) ? record.severity : "info";
  row.dataset.severity = severity;
  // a problem the spawn got past (richprogress/resolved.py): quiet, with a "resolved" pill
  const overcome = record.overcome === true && severity !== "info";
  if (overcome) row.dataset.overcome = "true";
  else delete row.dataset.overcome;

  const [moment, stamp] = rowMoment(record, started);
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
  const shown = shownPills(record, ownPod);
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
  if (overcome) pills.append(el("span", "rp-pill rp-pill-overcome", OVERCOME_PILL));
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

/** The live page: rows keyed by record id, so repeats and stream replays update in place. */
class PendingPage {
  constructor(data) {
    this.data = data;
    this.rows = new Map();
    this.log = document.getElementById("progress-log");
    this.bar = document.getElementById("progress-bar");
    this.srProgress = document.getElementById("sr-progress");
    this.message = document.getElementById("progress-message");
    this.step = document.getElementById("rp-step");
    this.stepOrder = -1;
    /** The live diagnosis's state while it says waiting cannot fix it (else null). */
    this.cannotContinue = null;
    this.elapsed = document.getElementById("rp-elapsed");
    this.eventCount = document.getElementById("rp-event-count");
    this.progress = 0;
    this.finished = false;
    // Rows waiting for the next animation frame: a replay of a long spawn (or a burst of
    // events) becomes one DOM write per frame, not one per event.
    this.queued = new Map();
    this.frame = null;
    // the clock of the last row in the list: no row below reads earlier
    this.lastClock = null;
    this.spawnRows = 0;
    // The hub's elapsed time at render plus the browser's monotonic clock: right even when
    // the browser's wall clock is off.
    this.serverElapsed = typeof data.serverElapsed === "number" ? data.serverElapsed : null;
    this.loadedAt = performance.now();
    this.live = new LiveBanner({
      stopUrl: data.stopUrl,
      spawnUrl: data.spawnUrl,
      xsrf: xsrfToken,
      beforeStop: () => {
        this.stopRequested = true;
      },
    });
    if (this.serverElapsed === null) {
      document.getElementById("rp-elapsed-label").textContent = "Waiting on this page for";
    }
    // typical start times (issue 12): the step's usual time, and the bar moved by it
    this.typical = new TypicalLine(data.typical, {
      phases: PHASES,
      setProgress: (pct) => this.setProgress(pct),
    });
  }

  start() {
    // No rows from the page itself: the event stream replays the spawn from its start,
    // in order, on every (re)connection.
    this.setProgress(this.data.progress || 0);
    this.tick();
    this.timer = window.setInterval(() => this.tick(), 1000);
    this.contact = new ContactWatch(this);
    this.connect();
    this.wireStop();
    titleTimesOnFirstLook(this.log);
    // every row's Details button, through one listener (row-details.js)
    listenForToggles(this.log);
  }

  /** Seconds since the start request (or since the page loaded, without the hub's time). */
  now() {
    return (this.serverElapsed || 0) + (performance.now() - this.loadedAt) / 1000;
  }

  tick() {
    const seconds = this.now();
    this.elapsed.textContent = formatElapsed(seconds);
    this.typical.tick(seconds);
  }

  setProgress(value) {
    const pct = Math.max(this.progress, Math.min(100, Math.round(Number(value) || 0)));
    if (pct === this.progress && this.bar.style.width) return;
    this.progress = pct;
    this.bar.setAttribute("aria-valuenow", String(pct));
    this.bar.style.width = `${pct}%`;
    this.srProgress.textContent = `${pct}%`;
  }

  /** Queue a record; rows are written on the next animation frame. @param {EventRecord} record */
  addRecord(record) {
    this.queued.set(record.id, record);
    this.advanceStep(record.phase);
    if (this.stepName) this.typical.enterStep(this.stepName, record.since_spawn, this.now());
    if (this.frame === null) {
      this.frame = window.requestAnimationFrame(() => this.flush());
    }
  }

  /**
   * Rows the spawn got past (the event of the record that got past them names them):
   * refilled quiet, with a "resolved" pill, on the next frame like any change.
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
        fillRow(row, record, this.data.started, row.rpFloor, this.data.ownPod);
        continue;
      }
      row = el("div", "progress-log-event rp-event");
      row.setAttribute("role", "listitem");
      row.dataset.recordId = record.id;
      row.rpFloor = this.lastClock;
      row.rpRecord = record; // (a later "resolved" refills the row from it)
      this.rows.set(record.id, row);
      if (record.id !== `message:${SERVER_REQUESTED}`) this.spawnRows += 1;
      const clock = fillRow(row, record, this.data.started, row.rpFloor, this.data.ownPod);
      if (clock !== null && clock !== undefined) this.lastClock = clock;
      fresh.append(row);
    }
    const written = [...this.queued.keys()].map((id) => this.rows.get(id));
    this.queued.clear();
    this.log.append(fresh);
    // for modules that add to rows (a row is rebuilt whenever its record changes)
    this.log.dispatchEvent(new CustomEvent("richprogress:rows", { detail: { rows: written } }));
    const n = this.spawnRows;
    const from = this.data.viewerIsOwner ? "when you clicked Start" : "the start request";
    // the failure page's words, so the two read alike
    this.eventCount.textContent = `(${n} event${n === 1 ? "" : "s"}, clock from ${from})`;
    this.showStep();
  }

  /**
   * Show the furthest step reached. Like the progress bar it never goes back: a repeated
   * FailedScheduling after a scale-up began does not mean the scale-up stopped.
   * @param {?string} phase
   */
  advanceStep(phase) {
    const order = phase ? PHASE_ORDER.get(phase) : undefined;
    if (order === undefined || order < this.stepOrder) return;
    this.stepOrder = order;
    this.stepName = phase;
  }

  /** The step label and, under the bar, the step's state (not the newest event). */
  showStep() {
    if (!this.stepName || this.finished) return;
    const label = PHASE_LABELS.get(this.stepName);
    if (this.step.textContent !== label) this.step.textContent = label;
    const state = CANNOT_CONTINUE_STATES[this.cannotContinue] || STEP_STATES[this.stepName] || "";
    if (this.message.textContent !== state) this.message.textContent = state;
  }

  /** A message without a record (a stock spawner, or the hub's own): keyed by its text. */
  addMessage(message) {
    // The hub's "Server requested" is the spawn's request: +0:00 when we know the start.
    const requested = message === SERVER_REQUESTED && this.data.started;
    this.addRecord({
      id: `message:${message}`,
      timestamp: requested ? this.data.started : null,
      first_timestamp: null,
      type: "",
      severity: "info",
      reason: null,
      object: null,
      component: null,
      count: 1,
      message,
      raw_message: message,
      rule: null,
      since_spawn: requested ? 0 : null,
    });
  }

  /** @param {ProgressEvent} evt */
  onEvent(evt) {
    if (evt.progress !== undefined) this.setProgress(evt.progress);
    // A stock spawner's message is all there is to say; with records, the step says more.
    if (evt.message !== undefined && !(evt.record && evt.record.phase) && !this.stepName) {
      this.message.textContent = displayText(evt.message);
    }
    if (evt.record && evt.record.id) this.addRecord(evt.record);
    else if (evt.message && !evt.ready && !evt.failed) this.addMessage(evt.message);
    if (Array.isArray(evt.resolved)) this.markResolved(evt.resolved);
    if ("diagnosis" in evt) {
      this.live.update(evt.diagnosis);
      const state = evt.diagnosis ? evt.diagnosis.state : null;
      this.cannotContinue = state && Object.hasOwn(CANNOT_CONTINUE_STATES, state) ? state : null;
      this.typical.stepAside(this.cannotContinue !== null, this.now());
      this.showStep();
    }
    if (evt.ready || evt.failed) {
      this.live.end();
      this.typical.end();
    }
    if (evt.ready) {
      this.flush();
      this.stop();
      this.step.textContent = PHASE_LABELS.get("ready");
      // Reloading this page redirects to the running server (JupyterHub's contract).
      window.location.reload();
    } else if (evt.failed) {
      this.flush();
      this.stop();
      // After the Stop button, "Spawn cancelled" is what the user asked for, not a failure.
      if (!this.stopRequested) this.showFailure(evt.message || "");
    }
  }

  connect() {
    // EventSource reconnects by itself; the hub replays the spawn's events from the start,
    // and rows keyed by record id make the replay update rows instead of adding them.
    // The page's first inline script opens it (JupyterHub's stock contract).
    this.source =
      typeof window.richprogressOpenProgress === "function"
        ? window.richprogressOpenProgress()
        : new EventSource(this.data.progressUrl);
    this.contact.follow(this.source);
    this.source.onmessage = (e) => {
      let evt;
      try {
        evt = JSON.parse(e.data);
      } catch {
        return;
      }
      this.onEvent(evt);
    };
  }

  /** Drop the stream and open a new one, as a network blip would (tests use it). */
  reconnect() {
    if (this.finished) return;
    if (this.source) this.source.close();
    this.connect();
  }

  stop() {
    this.finished = true;
    if (this.source) this.source.close();
    window.clearInterval(this.timer);
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

  async showFailure(message) {
    const cleaned = message.replace(/^(\s*spawn failed\s*:?\s*)+/i, "");
    this.bar.classList.add("bg-danger");
    // A failed start is not "100% Complete" to a screen reader.
    this.bar.setAttribute("aria-label", "Server start failed");
    this.bar.setAttribute("aria-valuetext", `Failed at ${this.progress}%`);
    document.getElementById("rp-sr-state").textContent = "reached when it failed";
    const stepLabel = PHASE_LABELS.get(this.stepName || "requested");
    this.step.textContent = `Failed during: ${stepLabel}`;
    const whose = this.data.viewerIsOwner ? "Your server" : `The server of ${displayText(this.data.userName, 300)}`;
    document.getElementById("rp-title").textContent = `${whose} could not start`;
    document.getElementById("rp-lead").hidden = true;
    // JupyterHub's own text ("Spawn failed: ", often empty); the alert says it better.
    this.message.textContent = "";
    this.message.hidden = true;
    document.getElementById("rp-elapsed-label").textContent = "Gave up after";
    // "18 s" reads as words, not as a ticking m:ss clock
    this.elapsed.classList.remove("rp-mono");
    this.elapsed.textContent = formatDuration(
      (this.serverElapsed || 0) + (performance.now() - this.loadedAt) / 1000,
    );
    // Nothing is running any more: the next step is the failure page or a relaunch.
    document.getElementById("stop-server-btn").hidden = true;
    const box = document.getElementById("rp-failure");
    const summary = document.getElementById("rp-failure-summary");
    const hint = document.getElementById("rp-failure-hint");
    showHeadline(summary, displayText(cleaned) || `${whose} could not start.`);
    box.hidden = false;
    document.getElementById("progress-details").open = true;
    // The hub's diagnosis reads better than the exception text (which may be empty).
    try {
      const response = await fetch(this.data.timelineUrl, {
        headers: { Accept: "application/json", "X-XSRFToken": xsrfToken() },
        credentials: "same-origin",
      });
      if (!response.ok) return;
      const timeline = await response.json();
      if (typeof timeline.elapsed === "number") {
        // the hub's own figure, as the failure page shows it
        this.elapsed.textContent = formatDuration(timeline.elapsed);
      }
      if (timeline.diagnosis) {
        const owner = this.data.viewerIsOwner;
        if (timeline.diagnosis.summary) showHeadline(summary, displayText(forViewer(timeline.diagnosis.summary, owner)));
        hint.textContent = displayText(forViewer(timeline.diagnosis.hint || "", owner));
        if (timeline.diagnosis.phase && PHASE_LABELS.has(timeline.diagnosis.phase)) {
          this.step.textContent = `Failed during: ${PHASE_LABELS.get(timeline.diagnosis.phase)}`;
        }
        this.markCause(timeline.diagnosis.record_id);
      }
    } catch {
      // The link to the failure page is there either way.
    }
  }

  wireStop() {
    const button = document.getElementById("stop-server-btn");
    const status = document.getElementById("stop-server-status");
    button.addEventListener("click", async () => {
      this.stopRequested = true;
      button.disabled = true;
      button.textContent = "Stopping...";
      status.hidden = false;
      status.className = "mt-2 alert alert-info";
      status.textContent = "Stopping server...";
      try {
        const response = await fetch(this.data.stopUrl, {
          method: "DELETE",
          headers: { "X-XSRFToken": xsrfToken() },
          credentials: "same-origin",
        });
        if (!response.ok) {
          const body = await response.json().catch(() => ({}));
          throw new Error(body.message || `${response.status} ${response.statusText}`);
        }
        status.className = "mt-2 alert alert-success";
        status.textContent = "Server stopped.";
        window.setTimeout(() => window.location.reload(), 1000);
      } catch (err) {
        this.stopRequested = false;
        status.className = "mt-2 alert alert-danger";
        status.textContent = `Error stopping server: ${err.message}`;
        button.disabled = false;
        button.textContent = "Stop Server";
      }
    });
  }
}

/**
 * The diagnosis as the viewer reads it (richprogress/web_context.py for_viewer): an admin
 * looking at someone else's failure is not told about "your server".
 * @param {string} text
 * @param {boolean} viewerIsOwner
 */
export function forViewer(text, viewerIsOwner) {
  if (viewerIsOwner) return text;
  return text.replaceAll("Your server", "The server").replaceAll("your server", "the server");
}

/**
 * The failure's sentence with its long name (an image) on a line of its own, in
 * monospace, with a copy button (the failure page's layout, built with text nodes).
 * @param {HTMLElement} summary
 * @param {string} text
 */
function showHeadline(summary, text) {
  const [headline, reference] = headlineParts(text);
  summary.textContent = headline;
  const line = document.getElementById("rp-failure-ref-line");
  const code = document.getElementById("rp-failure-ref");
  if (!line || !code) return;
  code.replaceChildren();
  appendBreakable(code, reference);
  line.hidden = !reference;
  wireCopy(document.getElementById("rp-failure-copy-ref"), () => reference);
}

/** A button that copies a text; says "Copied" for a moment (or that it could not). */
function wireCopy(button, text) {
  if (!button || button.dataset.wired) return;
  button.dataset.wired = "1";
  if (!navigator.clipboard) {
    button.hidden = true;
    return;
  }
  button.hidden = false;
  const label = button.textContent;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text());
      button.textContent = "Copied";
    } catch {
      button.textContent = "Could not copy";
    }
    window.setTimeout(() => (button.textContent = label), 2000);
  });
}

function xsrfToken() {
  return (window.jhdata && window.jhdata.xsrf_token) || "";
}

/**
 * A row's local time (the title of its UTC time) is worked out when the row is first
 * hovered or focused, not for every row of a long timeline at load.
 */
function titleTimesOnFirstLook(log) {
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

/** The failure page is server-rendered; add local times and the copy button. */
function setUpFailurePage() {
  for (const time of document.querySelectorAll("time.rp-local")) {
    const local = localTime(time.dateTime);
    if (local) {
      time.after(el("span", "rp-localtime", ` (${local} your time)`));
    }
  }
  const timeline = document.getElementById("rp-timeline");
  if (timeline) titleTimesOnFirstLook(timeline);
  wireRenderedDetails();
  const ref = document.getElementById("rp-copy-ref");
  if (ref) wireCopy(ref, () => ref.dataset.copy || "");
  const button = document.getElementById("rp-copy");
  const report = document.getElementById("rp-report");
  const status = document.getElementById("rp-copy-status");
  if (!button || !report || !navigator.clipboard) return;
  button.hidden = false;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(report.textContent);
      status.textContent = "Copied. Paste it into a message to your admin.";
    } catch {
      // Clipboard refused (permissions, insecure origin): show the text to copy by hand.
      document.getElementById("rp-report-details").open = true;
      status.textContent = "Could not copy: select the report below and copy it.";
    }
  });
}

function main() {
  const holder = document.getElementById("richprogress-data");
  if (!holder) return;
  const data = JSON.parse(holder.textContent);
  if (data.page === "pending") {
    const page = new PendingPage(data);
    page.start();
    // For browser tests and the curious: window.richprogressPage.reconnect().
    window.richprogressPage = page;
  } else if (data.page === "failed") {
    setUpFailurePage();
  }
  window._jupyterhub_page_loaded = true;
  document.body.dataset.richprogress = "ready";
}

// Imported outside a browser (the vocabulary and clock tests run it under node): no page.
if (typeof document !== "undefined") main();
