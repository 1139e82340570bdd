// richprogress: the live spawn timeline (templates/spawn_pending.html). The page's entry
// module, shipped as is (no build step); text reaches the DOM only through textContent.
//
// DOM contract (ids and classes other code and the browser tests rely on):
//
//   Data      script#richprogress-data   JSON from Python (|tojson), .page = "pending";
//             .vocabulary: the severities, steps and their words (rows.js Vocabulary)
//   Keeps JupyterHub's stock contract:
//     #progress-bar          .progress-bar, aria-valuenow = percent; .bg-danger once failed
//     #sr-progress           "NN%" for screen readers
//     #rp-sr-state           "Complete", "failed" once failed (the bar's label says so too)
//     #progress-message      the current step's state (vocabulary.stepStates); a stock
//                            spawner's latest message when the stream carries no records
//     #progress-details      <details> around the log (open)
//     #progress-log          div[role=list]; one div.progress-log-event.rp-event
//                            [role=listitem] per record (stock row element and class;
//                            rows.js builds them, once per animation frame)
//   First inline script of the body: window.richprogressOpenProgress() opens the stream
//     (stream.js)
//     #stop-server-btn       stops the server (DELETE on the server API); #stop-server-status
//   #rp-title                the heading ("Starting your server", then "... could not start")
//   #rp-lead                 "You will be redirected ..." (hidden once failed)
//   #rp-step                 current step label, aria-live="polite"
//   #rp-elapsed              "m:ss" since the user clicked Start (server time + monotonic
//                            clock); once failed "30 s" after #rp-elapsed-label "Gave up after"
//   #rp-event-count          "(N events)": rows of the spawn, not the hub's "Server requested"
//   #rp-failure              alert shown on the stream's "failed" message, holding
//                            #rp-failure-summary, #rp-failure-hint, a#rp-failure-link
//   Readiness: window._jupyterhub_page_loaded = true and body[data-richprogress="ready"]
//              once the module has set the page up.
//   Test hook: window.richprogressPage.reconnect() closes the event stream and opens a new
//              one; the hub replays the spawn, rows must not double.

import { displayText, listenForToggles } from "../row-details.js";
import { LiveBanner } from "../live-diagnosis.js";
import { TypicalLine } from "../typical-times.js";
import { formatDuration, formatElapsed } from "../clock.js";
import { forViewer, showHeadline } from "../headline.js";
import { SERVER_REQUESTED, TimelineRows, titleTimesOnFirstLook } from "../rows.js";
import { ProgressStream } from "../stream.js";

/** The live page: the bar, the step, the clock and the rows of one spawn. */
class PendingPage {
  constructor(data) {
    this.data = data;
    /** @type {import("../rows.js").Vocabulary} */
    const vocabulary = data.vocabulary;
    this.phases = vocabulary.phases;
    this.phaseLabels = new Map(vocabulary.phases.map(([name, label]) => [name, label]));
    this.phaseOrder = new Map(vocabulary.phases.map(([name], index) => [name, index]));
    this.stepStates = vocabulary.stepStates;
    this.log = document.getElementById("progress-log");
    this.rows = new TimelineRows(this.log, {
      started: data.started,
      ownPod: data.ownPod,
      vocabulary,
      onWritten: (n) => this.rowsWritten(n),
    });
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
    this.live = new LiveBanner({
      stopUrl: data.stopUrl,
      spawnUrl: data.spawnUrl,
      xsrf: xsrfToken,
      vocabulary,
      viewerIsOwner: Boolean(data.viewerIsOwner),
      hintLabel: data.hintLabel,
      beforeStop: () => this.stopping(),
      stopFailed: () => this.stopFailed(),
    });
    if (this.serverElapsed === null) {
      document.getElementById("rp-elapsed-label").textContent = "Waiting on this page for";
    }
    // typical start times: the step's usual time, and the bar moved by it
    this.typical = new TypicalLine(data.typical, {
      phases: this.phases,
      setProgress: (pct) => this.setProgress(pct),
    });
  }

  start() {
    // No rows from the page itself: the event stream replays the spawn from its start,
    // in order, on every (re)connection.
    this.setProgress(this.data.progress || 0);
    this.tick();
    this.timer = window.setInterval(() => this.tick(), 1000);
    this.stream = new ProgressStream(this, (evt) => this.onEvent(evt));
    this.stream.open();
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

  /** Queue a record's row and follow its step. @param {import("../rows.js").EventRecord} record */
  addRecord(record) {
    // the hub read this record at since_spawn by its clock: the header clock, which began
    // when the page loaded, must never show less than a row (one clock, one source)
    const since = record.since_spawn;
    if (typeof since === "number" && this.serverElapsed !== null && since > this.now()) {
      this.serverElapsed += since - this.now();
    }
    this.rows.queue(record);
    this.advanceStep(record.phase);
    if (this.stepName) this.typical.enterStep(this.stepName, record.since_spawn, this.now());
  }

  /** Write the queued rows now (the benchmark times this; else once per frame). */
  flush() {
    this.rows.flush();
  }

  /** After each write of rows: the count beside the timeline, the step. */
  rowsWritten(n) {
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
    const order = phase ? this.phaseOrder.get(phase) : undefined;
    if (order === undefined || order < this.stepOrder) return;
    this.stepOrder = order;
    this.stepName = phase;
  }

  /** The step label and, under the bar, the step's state (not the newest event). */
  showStep() {
    if (!this.stepName || this.finished) return;
    const label = this.phaseLabels.get(this.stepName);
    if (this.step.textContent !== label) this.step.textContent = label;
    // the verdict's words when its state has some ("the reason is below"), else the step's
    const verdict = this.live.verdict;
    const state = (verdict && verdict.words.status) || this.stepStates[this.stepName] || "";
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

  /** @param {import("../stream.js").ProgressEvent} evt */
  onEvent(evt) {
    // JupyterHub's own final "failed" event says 100: a failed start is not a full bar
    if (evt.progress !== undefined && !evt.failed) this.setProgress(evt.progress);
    // A stock spawner's message is all there is to say; with records, the step says more.
    if (evt.message !== undefined && !(evt.record && evt.record.phase) && !this.stepName) {
      this.message.textContent = displayText(evt.message);
    }
    if (evt.record && evt.record.id) this.addRecord(evt.record);
    else if (evt.message && !evt.ready && !evt.failed) this.addMessage(evt.message);
    if (Array.isArray(evt.resolved)) this.rows.markResolved(evt.resolved);
    if (evt.verdict && !this.stopRequested) {
      // the rows the verdict speaks of are on the page before the verdict is
      this.flush();
      this.applyVerdict(evt.verdict);
    }
    if (evt.ready || evt.failed) this.typical.end();
    if (this.stopRequested && (evt.ready || evt.failed)) {
      // the end of a spawn its user stopped: the page keeps saying "stopping" until the
      // stop button's own reload (or the spawn form) takes over
      this.flush();
      this.stop();
    } else if (evt.ready) {
      this.flush();
      this.stop();
      this.applyVerdict(this.live.pageVerdict("ready"));
      this.step.textContent = this.phaseLabels.get("ready");
      this.message.textContent = this.live.verdict.words.status || "";
      // Reloading this page redirects to the running server (JupyterHub's contract).
      window.location.reload();
    } else if (evt.failed) {
      this.flush();
      this.stop();
      this.applyVerdict(this.live.pageVerdict("failed"));
      this.showFailure(evt.message || "");
    }
  }

  /**
   * Show a verdict: the banner, the bar, the lines and the buttons follow its table.
   * @param {import("../live-diagnosis.js").Verdict} verdict
   */
  applyVerdict(verdict) {
    this.live.render(verdict);
    const show = this.live.verdict ? this.live.verdict.show : null;
    if (show) this.typical.stepAside(!show.typical, this.now());
    this.showStep();
  }

  /** The user asked to stop the server: nothing the hub says now is news to them. */
  stopping() {
    if (!this.stopRequested) this.beforeStop = this.live.verdict;
    this.stopRequested = true;
    this.applyVerdict(this.live.pageVerdict("stopping"));
    this.message.textContent = this.live.verdict.words.status || "";
  }

  /** The stop did not go through: back to what the hub said last. */
  stopFailed() {
    this.stopRequested = false;
    this.applyVerdict(this.beforeStop || this.live.pageVerdict("progressing"));
  }

  /** The stream lost the hub (connection.js): a "still trying" would be old news. */
  contactLost() {
    if (this.finished || this.stopRequested) return;
    this.beforeLost = this.live.verdict;
    this.applyVerdict(this.live.pageVerdict("lost"));
  }

  /** The stream is back: the hub's last verdict until it sends a new one. */
  contactBack() {
    if (this.finished || this.stopRequested || !this.beforeLost) return;
    this.applyVerdict(this.beforeLost);
    this.beforeLost = null;
  }

  /** Drop the stream and open a new one, as a network blip would (tests use it). */
  reconnect() {
    if (this.finished) return;
    this.stream.reconnect();
  }

  stop() {
    this.finished = true;
    if (this.stream) this.stream.close();
    window.clearInterval(this.timer);
  }

  async showFailure(message) {
    const cleaned = message.replace(/^(\s*spawn failed\s*:?\s*)+/i, "");
    this.bar.classList.add("bg-danger");
    // A failed start is not "100% Complete" to a screen reader.
    this.bar.setAttribute("aria-label", "Server start failed");
    this.bar.setAttribute("aria-valuetext", `Failed at ${this.progress}%`);
    document.getElementById("rp-sr-state").textContent = "reached when it failed";
    const stepLabel = this.phaseLabels.get(this.stepName || "requested");
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
      // the hub's verdict on the failed spawn: the failure page says the same
      const verdict = timeline.verdict;
      const cause = verdict && verdict.cause;
      if (cause) {
        const owner = this.data.viewerIsOwner;
        if (cause.summary) showHeadline(summary, displayText(forViewer(cause.summary, owner)));
        hint.textContent = displayText(forViewer(cause.hint || "", owner));
        if (this.phaseLabels.has(verdict.step)) {
          this.step.textContent = `Failed during: ${this.phaseLabels.get(verdict.step)}`;
        }
        this.rows.markCause(cause.record_id);
      }
    } catch {
      // The link to the failure page is there either way.
    }
  }

  wireStop() {
    const button = document.getElementById("stop-server-btn");
    const status = document.getElementById("stop-server-status");
    button.addEventListener("click", async () => {
      this.stopping();
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
        this.stopFailed();
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

function main() {
  const holder = document.getElementById("richprogress-data");
  if (!holder) return;
  const page = new PendingPage(JSON.parse(holder.textContent));
  page.start();
  // For browser tests and the curious: window.richprogressPage.reconnect().
  window.richprogressPage = page;
  window._jupyterhub_page_loaded = true;
  document.body.dataset.richprogress = "ready";
}

// Imported outside a browser (tests run modules under node): no page.
if (typeof document !== "undefined") main();
