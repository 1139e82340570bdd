// richprogress: the live cause banner of the pending page. An ES module imported by
// pages/pending.js; text reaches the DOM only through textContent.
//
// The hub sends the spawn's live diagnosis on the progress stream as "diagnosis" whenever
// it changes (null when a problem cleared). This module shows it above the timeline, in
// the failure page's words:
//
//   #rp-live                  the banner (hidden when nothing is wrong); data-state =
//                             "trying" (calm: the cluster is still working on it),
//                             "hopeless" (red: waiting will not fix it) or "stopped"
//                             (the hub ended the start because of it); aria-live polite
//                             with aria-atomic, and it changes only when the cause changes,
//                             so a screen reader hears it once, not for every row
//     #rp-live-kicker         "Still trying" / "This will not fix itself" / "Stopped early"
//                             (vocabulary.liveKickers: the page's data, from Python)
//     #rp-live-summary        the cause, one sentence
//     #rp-live-hint           what the user can do
//     #rp-live-stop           "Stop and change options": stops the server, then opens the
//                             spawn form (hidden while "trying")
//   #rp-step-state            after #rp-step: the state in words beside the step label
//                             (vocabulary.liveStepStates)
//   #progress-bar             .bg-danger while hopeless, .rp-bar-trying while trying
//   #rp-step                  aria-live turned off while the banner speaks for it

/**
 * The live diagnosis on the progress stream (richprogress/story/fail_fast.py LiveDiagnosis).
 * @typedef {Object} LiveDiagnosis
 * @property {string} summary      the cause, one sentence (the failure page's)
 * @property {?string} hint        what the user can do
 * @property {?string} phase       the step it is about (a vocabulary.phases name)
 * @property {?string} record_id   the record that explains it
 * @property {string} state        one of vocabulary.liveStates
 * @property {boolean} fatal       waiting cannot fix it
 * @property {number} count        how many times it happened
 */

export class LiveBanner {
  /**
   * @param {{stopUrl: string, spawnUrl: string, xsrf: () => string, beforeStop: () => void,
   *          vocabulary: import("./rows.js").Vocabulary}} options
   */
  constructor(options) {
    this.options = options;
    this.states = options.vocabulary.liveStates;
    this.kickers = options.vocabulary.liveKickers;
    this.stepStates = options.vocabulary.liveStepStates;
    this.box = document.getElementById("rp-live");
    this.kicker = document.getElementById("rp-live-kicker");
    this.summary = document.getElementById("rp-live-summary");
    this.hint = document.getElementById("rp-live-hint");
    this.button = document.getElementById("rp-live-stop");
    this.bar = document.getElementById("progress-bar");
    this.step = document.getElementById("rp-step");
    this.stepState = document.createElement("span");
    this.stepState.id = "rp-step-state";
    this.stepState.className = "rp-step-state";
    this.stepState.hidden = true;
    if (this.step) this.step.after(this.stepState);
    this.shown = null;
    if (this.button) this.button.addEventListener("click", () => this.stopAndChange());
  }

  /** Whether the page has the banner's markup (an admin's own template may not). */
  get usable() {
    return Boolean(this.box && this.kicker && this.summary && this.hint && this.button);
  }

  /** @param {?LiveDiagnosis} diagnosis  null: nothing is wrong (any more) */
  update(diagnosis) {
    if (!this.usable) return;
    const state = diagnosis && this.states.includes(diagnosis.state) ? diagnosis.state : null;
    const key = state ? `${state}\n${diagnosis.summary}\n${diagnosis.hint || ""}` : null;
    if (key === this.shown) return; // unchanged: say nothing again
    this.shown = key;
    this.bar.classList.toggle("bg-danger", state === "hopeless" || state === "stopped");
    this.bar.classList.toggle("rp-bar-trying", state === "trying");
    if (!state) {
      this.box.hidden = true;
      this.stepState.hidden = true;
      if (this.step) this.step.setAttribute("aria-live", "polite");
      return;
    }
    // the banner announces the change; the step label must not say it a second time
    if (this.step) this.step.setAttribute("aria-live", "off");
    this.box.dataset.state = state;
    this.kicker.textContent = this.kickers[state];
    this.summary.textContent = diagnosis.summary || "";
    this.hint.textContent = diagnosis.hint ? `What you can do: ${diagnosis.hint}` : "";
    this.hint.hidden = !diagnosis.hint;
    this.button.hidden = state === "trying";
    this.stepState.textContent = `(${this.stepStates[state]})`;
    this.stepState.dataset.state = state;
    this.stepState.hidden = false;
    this.box.hidden = false;
  }

  /** The spawn ended (ready or failed): the failure box or the server takes over. */
  end() {
    if (!this.usable) return;
    this.box.hidden = true;
    this.button.disabled = true;
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
      this.button.disabled = false;
      this.button.textContent = "Stop and change options";
      this.hint.hidden = false;
      this.hint.textContent = `Could not stop the server: ${err.message}`;
    }
  }
}
