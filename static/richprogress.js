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
//     #progress-message      the latest event's plain-text message
//     #progress-details      <details> around the log (open)
//     #progress-log          <ol>; one li.progress-log-event.rp-event per record
//     #stop-server-btn       stops the server (DELETE on the server API); #stop-server-status
//     #rp-title              the heading ("Starting your server", then "... could not start")
//     #rp-lead               "You will be redirected ..." (hidden once failed)
//     #rp-step               current step label, aria-live="polite"
//     #rp-elapsed            "m:ss" since the user clicked Start (server time + monotonic clock)
//     #rp-event-count        "(N events)"
//     #rp-failure            alert shown on the stream's "failed" message, holding
//                            #rp-failure-summary, #rp-failure-hint, a#rp-failure-link
//   Event row (both pages):
//     li.rp-event[data-record-id][data-severity=info|warning|error] (.rp-decisive on the cause)
//       .rp-when > .rp-clock ("+0:07") + .rp-last ("to +0:31", repeats only)
//                  + time.rp-time[datetime] (UTC text, local time in title)
//       .rp-body > .rp-pills > .rp-pill.rp-pill-type / .rp-pill-reason / .rp-pill-object /
//                              .rp-pill-container, .rp-count ("x4", only when count > 1)
//               > .rp-message (the human sentence)
//     li.rp-fold             records folded out of view (failure page)
//   Failure page:
//     #rp-summary, #rp-hint, #rp-facts, #rp-timeline, a#start (Relaunch, stock id),
//     #rp-copy (Copy details; hidden without JS), #rp-copy-status, pre#rp-report
//     time.rp-local          UTC time; this module appends the local time
//   Readiness: window._jupyterhub_page_loaded = true and body[data-richprogress="ready"]
//              once the module has set the page up.
//   Test hook: window.richprogressPage.reconnect() (pending page) closes the event stream
//              and opens a new one; the hub replays the spawn, rows must not double.

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
 */

/** "+m:ss" (or "+h:mm:ss") since the spawn started; "" when unknown. */
export function formatClock(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "";
  return "+" + formatElapsed(seconds);
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

function localTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
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

/** Fill (or refill) one row from a record; the row keeps its place in the list. */
function fillRow(row, record, started) {
  const severity = SEVERITIES.includes(record.severity) ? record.severity : "info";
  row.dataset.severity = severity;
  row.replaceChildren();

  const [since, stamp] = rowMoment(record, started);
  const when = el("span", "rp-when");
  when.append(el("span", "rp-clock", formatClock(since)));
  // a repeat that went on: when it last happened (the clock shows when it began)
  const lastClock = formatClock(record.since_spawn);
  if (since !== null && lastClock && lastClock !== formatClock(since)) {
    when.append(el("span", "rp-last", `to ${lastClock}`));
  }
  if (stamp) {
    const time = el("time", "rp-time", stamp.slice(11, 19));
    time.dateTime = stamp;
    time.title = `${localTime(stamp)} (your time)`;
    when.append(time);
  }

  const body = el("span", "rp-body");
  const pills = el("span", "rp-pills");
  if (record.type) pills.append(el("span", "rp-pill rp-pill-type", record.type));
  if (record.reason) pills.append(el("span", "rp-pill rp-pill-reason", record.reason));
  const object = objectLabel(record.object);
  if (object) pills.append(el("span", "rp-pill rp-pill-object", object));
  if (record.object && record.object.container) {
    pills.append(el("span", "rp-pill rp-pill-container", `container ${record.object.container}`));
  }
  const count = Number(record.count) || 1;
  if (count > 1) {
    const badge = el("span", "rp-count", `x${count}`);
    const last = record.timestamp ? ` (${record.timestamp.slice(11, 19)} UTC)` : "";
    badge.title = `happened ${count} times, last at ${formatClock(record.since_spawn)}${last}`;
    pills.append(badge);
  }
  if (pills.childElementCount) body.append(pills);
  body.append(el("span", "rp-message", record.message || record.raw_message || ""));
  row.append(when, body);
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
    this.elapsed = document.getElementById("rp-elapsed");
    this.eventCount = document.getElementById("rp-event-count");
    this.progress = 0;
    this.finished = false;
    // The hub's elapsed time at render plus the browser's monotonic clock: right even when
    // the browser's wall clock is off.
    this.serverElapsed = typeof data.serverElapsed === "number" ? data.serverElapsed : null;
    this.loadedAt = performance.now();
    if (this.serverElapsed === null) {
      document.getElementById("rp-elapsed-label").textContent = "Waiting on this page for";
    }
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
  }

  tick() {
    const seconds = (this.serverElapsed || 0) + (performance.now() - this.loadedAt) / 1000;
    this.elapsed.textContent = formatElapsed(seconds);
  }

  setProgress(value) {
    const pct = Math.max(this.progress, Math.min(100, Math.round(Number(value) || 0)));
    this.progress = pct;
    this.bar.setAttribute("aria-valuenow", String(pct));
    this.bar.style.width = `${pct}%`;
    this.srProgress.textContent = `${pct}%`;
  }

  /** @param {EventRecord} record */
  addRecord(record) {
    let row = this.rows.get(record.id);
    if (!row) {
      row = el("li", "progress-log-event rp-event");
      row.dataset.recordId = record.id;
      this.rows.set(record.id, row);
      this.log.append(row);
    }
    fillRow(row, record, this.data.started);
    const n = this.rows.size;
    this.eventCount.textContent = `(${n} event${n === 1 ? "" : "s"})`;
    this.advanceStep(record.phase);
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
    const label = PHASE_LABELS.get(phase);
    if (this.step.textContent !== label) this.step.textContent = label;
  }

  /** A message without a record (a stock spawner, or the hub's own): keyed by its text. */
  addMessage(message) {
    this.addRecord({
      id: `message:${message}`,
      timestamp: null,
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
      since_spawn: null,
    });
  }

  /** @param {ProgressEvent} evt */
  onEvent(evt) {
    if (evt.progress !== undefined) this.setProgress(evt.progress);
    if (evt.message !== undefined) this.message.textContent = evt.message;
    if (evt.record && evt.record.id) this.addRecord(evt.record);
    else if (evt.message && !evt.ready && !evt.failed) this.addMessage(evt.message);
    if (evt.ready) {
      this.stop();
      this.step.textContent = PHASE_LABELS.get("ready");
      // Reloading this page redirects to the running server (JupyterHub's contract).
      window.location.reload();
    } else if (evt.failed) {
      this.stop();
      // After the Stop button, "Spawn cancelled" is what the user asked for, not a failure.
      if (!this.stopRequested) this.showFailure(evt.message || "");
    }
  }

  connect() {
    // EventSource reconnects by itself; the hub replays the spawn's events from the start,
    // and rows keyed by record id make the replay update rows instead of adding them.
    this.source = new EventSource(this.data.progressUrl);
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

  async showFailure(message) {
    const cleaned = message.replace(/^(\s*spawn failed\s*:?\s*)+/i, "");
    this.bar.classList.add("bg-danger");
    this.step.textContent = `Stopped at: ${this.step.textContent}`;
    const whose = this.data.viewerIsOwner ? "Your server" : `The server of ${this.data.userName}`;
    document.getElementById("rp-title").textContent = `${whose} could not start`;
    document.getElementById("rp-lead").hidden = true;
    // JupyterHub's own text ("Spawn failed: ", often empty); the alert says it better.
    this.message.textContent = "";
    // Nothing is running any more: the next step is the failure page or a relaunch.
    document.getElementById("stop-server-btn").hidden = true;
    const box = document.getElementById("rp-failure");
    const summary = document.getElementById("rp-failure-summary");
    const hint = document.getElementById("rp-failure-hint");
    summary.textContent = cleaned || `${whose} could not start.`;
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
      if (timeline.diagnosis) {
        summary.textContent = timeline.diagnosis.summary || summary.textContent;
        hint.textContent = timeline.diagnosis.hint || "";
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

function xsrfToken() {
  return (window.jhdata && window.jhdata.xsrf_token) || "";
}

/** The failure page is server-rendered; add local times and the copy button. */
function setUpFailurePage() {
  for (const time of document.querySelectorAll("time.rp-local")) {
    const local = localTime(time.dateTime);
    if (local) {
      time.after(el("span", "rp-localtime", ` (${local} your time)`));
    }
  }
  for (const time of document.querySelectorAll("time.rp-time")) {
    const local = localTime(time.dateTime);
    if (local) time.title = `${local} (your time)`;
  }
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
