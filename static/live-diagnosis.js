// richprogress: the pending page renders the one verdict. An ES module imported by
// pages/pending.js; text reaches the DOM only through textContent.
//
// The hub decides what the page says (richprogress/story/verdict.py) and sends it on the
// progress stream as "verdict" whenever it changes; two states only the page can know
// ("stopping": its user clicked Stop; "lost": its stream lost the hub) come from the same
// table, in the page's data (vocabulary.verdicts). This module shows a verdict and decides
// nothing: every element below follows the verdict's `show` and `words`.
//
//   #rp-live                  the banner (hidden unless show.banner); data-state =
//                             "blocked" (amber: may clear up) or "hopeless" (red);
//                             aria-live polite with aria-atomic, and it changes only when
//                             the cause changes, so a screen reader hears it once
//     #rp-live-kicker         words.kicker ("Still trying", "This will not fix itself")
//     #rp-live-summary        the cause, one sentence
//     #rp-live-hint           what the viewer can do
//     #rp-live-stop           "Stop and change options": stops the server, then opens the
//                             spawn form (shown when show.stop is "change" and the viewer
//                             can fix the cause by choosing other options)
//   #rp-step-state            after #rp-step: show.step_note in brackets
//   #progress-bar             .bg-danger (show.bar "danger"), .rp-bar-trying ("trying"),
//                             .rp-bar-stopped ("stopped")
//   #rp-lead                  "You will be redirected ..." (hidden unless show.redirect_line)
//   #stop-server-btn          hidden when show.stop is null
//   #rp-step                  aria-live turned off while the banner speaks for it

/**
 * The verdict on the progress stream (richprogress/story/verdict.py Verdict.to_dict()).
 * @typedef {Object} Verdict
 * @property {string} state       one of vocabulary.verdicts' keys
 * @property {string} step        the step (a vocabulary.phases name)
 * @property {?{summary: string, hint: ?string, phase: ?string, record_id: ?string,
 *              certainty: string, fixer: string, count: number, fatal: boolean}} cause
 * @property {{banner: ?string, bar: string, typical: boolean, redirect_line: boolean,
 *             stop: ?string, step_note: ?string}} show
 * @property {{kicker: ?string, status: ?string}} words
 */

import { forViewer } from "./headline.js";

export class LiveBanner {
  /**
   * @param {{stopUrl: string, spawnUrl: string, xsrf: () => string, beforeStop: () => void,
   *          viewerIsOwner: boolean, hintLabel: string, vocabulary: import("./rows.js").Vocabulary}} options
   */
  constructor(options) {
    this.options = options;
    this.verdicts = options.vocabulary.verdicts;
    this.box = document.getElementById("rp-live");
    this.kicker = document.getElementById("rp-live-kicker");
    this.summary = document.getElementById("rp-live-summary");
    this.hint = document.getElementById("rp-live-hint");
    this.button = document.getElementById("rp-live-stop");
    this.bar = document.getElementById("progress-bar");
    this.step = document.getElementById("rp-step");
    this.lead = document.getElementById("rp-lead");
    this.stopButton = document.getElementById("stop-server-btn");
    this.stepState = document.createElement("span");
    this.stepState.id = "rp-step-state";
    this.stepState.className = "rp-step-state";
    this.stepState.hidden = true;
    if (this.step) this.step.after(this.stepState);
    this.shown = null;
    /** @type {?Verdict} the verdict shown */
    this.verdict = null;
    if (this.button) this.button.addEventListener("click", () => this.stopAndChange());
  }

  /** Whether the page has the banner's markup (an admin's own template may not). */
  get usable() {
    return Boolean(this.box && this.kicker && this.summary && this.hint && this.button);
  }

  /**
   * A verdict of the page's own (stopping, lost, failed before the hub's arrives): the
   * table's show and words for that state, with the cause it had.
   * @param {string} state
   * @returns {Verdict}
   */
  pageVerdict(state) {
    const row = this.verdicts[state];
    const before = this.verdict;
    return {
      state,
      step: before ? before.step : "requested",
      cause: before ? before.cause : null,
      show: row.show,
      words: row.words,
    };
  }

  /** @param {Verdict} verdict */
  render(verdict) {
    if (!verdict || !this.verdicts[verdict.state]) return;
    this.verdict = verdict;
    const show = verdict.show || this.verdicts[verdict.state].show;
    const words = verdict.words || this.verdicts[verdict.state].words;
    this.bar.classList.toggle("bg-danger", show.bar === "danger");
    this.bar.classList.toggle("rp-bar-trying", show.bar === "trying");
    this.bar.classList.toggle("rp-bar-stopped", show.bar === "stopped");
    if (this.lead) this.lead.hidden = !show.redirect_line;
    if (this.stopButton && !show.stop) this.stopButton.hidden = true;
    this.stepState.textContent = show.step_note ? `(${show.step_note})` : "";
    this.stepState.dataset.state = verdict.state;
    this.stepState.hidden = !show.step_note;
    if (!this.usable) return;
    const cause = verdict.cause;
    const banner = show.banner && cause ? show.banner : null;
    const key = banner ? `${banner}\n${words.kicker}\n${cause.summary}\n${cause.hint || ""}` : null;
    // the change-options button follows who can fix it: not a cluster's retry
    const change = show.stop === "change" && cause && (cause.fixer === "you" || verdict.state === "hopeless");
    this.button.hidden = !banner || !change;
    if (key === this.shown) return; // unchanged: say nothing again
    this.shown = key;
    if (!banner) {
      this.box.hidden = true;
      if (this.step) this.step.setAttribute("aria-live", "polite");
      return;
    }
    // the banner announces the change; the step label must not say it a second time
    if (this.step) this.step.setAttribute("aria-live", "off");
    this.box.dataset.state = banner;
    this.kicker.textContent = words.kicker || "";
    const owner = this.options.viewerIsOwner;
    this.summary.textContent = forViewer(cause.summary || "", owner);
    const label = this.options.hintLabel;
    this.hint.textContent = cause.hint ? `${label}: ${forViewer(cause.hint, owner)}` : "";
    this.hint.hidden = !cause.hint;
    this.box.hidden = false;
  }

  /** Stop the server (a pending spawn is cancelled), then open the spawn form. */
  async stopAndChange() {
    this.button.disabled = true;
    this.button.textContent = "Stopping...";
    this.options.beforeStop(); // the "Spawn cancelled" that follows is what the user asked for
    try {
      const response = await fetch(this.options.stopUrl, {
        method: "DELETE",
        headers: { "X-XSRFToken": this.options.xsrf() },
        credentials: "same-origin",
      });
      // 400: not running any more (the hub ended the spawn meanwhile): the form is next anyway
      if (!response.ok && response.status !== 400) {
        throw new Error(`${response.status} ${response.statusText}`);
      }
      window.location.assign(this.options.spawnUrl);
    } catch (err) {
      this.options.stopFailed();
      this.button.disabled = false;
      this.button.textContent = "Stop and change options";
      this.hint.hidden = false;
      this.hint.textContent = `Could not stop the server: ${err.message}`;
    }
  }
}
