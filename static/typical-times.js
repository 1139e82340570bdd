// richprogress: typical start times on the pending page. An ES module imported by
// pages/pending.js; text reaches the DOM only through textContent.
//
// The words come from Python (richprogress/typical/words.py page_view, in the page's JSON
// as data.typical); this module only adds the running clock and moves the bar:
//
//   #rp-typical          near the clock: "Usually ready in about 3 min (9 in 10 within
//                        5 min)" (rendered by the template; absent without typical times)
//   #rp-typical-step     under the step: "Adding a machine usually takes 2-4 min; 1:20 so
//                        far" (hidden when the step has no typical time)
//   #rp-typical-longer   "This is taking longer than usual", once the step runs past its
//                        p90 or the whole start past its p90, as the words round them
//                        (calm: muted, not red); the spawner's patience row says it then
//                        too (richprogress/stream/patience.py)
//   #progress-bar        moved inside a step by expected time (progressInStep), never back
//
// Without data.typical the page reads exactly as without this module.

import { formatElapsed } from "./clock.js";

/**
 * One step's typical time (typical/words.py StepView).
 * @typedef {Object} StepView
 * @property {string} text   "Adding a machine usually takes 2-4 min"
 * @property {number} p50    seconds
 * @property {number} p90    seconds
 * @property {number} [late]  seconds in the step after which it is "longer than usual":
 *                            the p90 as the text words it (typical/words.py late_after)
 */

/**
 * The page's typical times (typical/words.py PageView).
 * @typedef {Object} PageView
 * @property {?string} usually    "Usually ready in about 3 min (9 in 10 within 5 min)"
 * @property {?number} total_p90  seconds
 * @property {?number} [total_late]  seconds: the whole start's p90 as the words say it
 * @property {Object<string, StepView>} steps
 * @property {string} longer      "This is taking longer than usual"
 */

/**
 * "Adding a machine usually takes 2-4 min; 1:20 so far" (typical/words.py step_usually).
 * @param {?StepView} view
 * @param {?number} soFar  seconds in the step
 */
export function stepLine(view, soFar) {
  if (!view) return null;
  if (soFar === null || soFar === undefined || !Number.isFinite(soFar)) return view.text;
  return `${view.text}; ${formatElapsed(soFar)} so far`;
}

/**
 * Where the bar stands while a step runs (typical/words.py progress_in_step): the step's own
 * percent, halfway to the next step's at the step's p50, never reaching it.
 * @param {Array<[string, string, number]>} phases  the page's vocabulary.phases
 * @param {?StepView} view
 * @param {string} step
 * @param {number} stepElapsed  seconds
 */
export function progressInStep(phases, view, step, stepElapsed) {
  const index = phases.findIndex(([name]) => name === step);
  if (index < 0) return 0;
  const here = phases[index][2];
  if (!view || index + 1 >= phases.length || !(stepElapsed > 0)) return here;
  const gap = phases[index + 1][2] - here;
  const usual = Math.max(view.p50, 0.001);
  const fraction = stepElapsed / (stepElapsed + usual);
  return here + Math.min(gap - 1, Math.trunc(gap * fraction));
}

/**
 * Whether the step, or the whole start, runs past its p90 as the page words it
 * (typical/words.py is_longer_than_usual; the spawner's "Still waiting" row says it then too).
 * @param {?StepView} view  @param {?number} stepSeconds
 * @param {?number} totalLate  the start's late_after (or its p90)  @param {?number} totalSeconds
 */
export function isLongerThanUsual(view, stepSeconds, totalLate, totalSeconds) {
  const stepLate = view ? (typeof view.late === "number" ? view.late : view.p90) : null;
  if (stepLate !== null && typeof stepSeconds === "number" && stepSeconds > stepLate) return true;
  return typeof totalLate === "number" && typeof totalSeconds === "number" && totalSeconds > totalLate;
}

export class TypicalLine {
  /**
   * @param {?PageView} data
   * @param {{phases: Array<[string, string, number]>, setProgress: (pct: number) => void}} options
   */
  constructor(data, options) {
    this.data = data && typeof data === "object" ? data : null;
    this.options = options;
    this.stepLine = document.getElementById("rp-typical-step");
    this.longer = document.getElementById("rp-typical-longer");
    // "Usually ready in about 5 s": rendered by the hub, hidden with the other two
    this.usually = document.getElementById("rp-typical");
    this.step = null;
    this.stepStart = null;
    this.ended = false;
    /** True while the live banner says waiting cannot fix the cause (see stepAside). */
    this.aside = false;
  }

  /** Whether there is anything to show (and the page has the markup for it). */
  get usable() {
    return Boolean(this.data && this.stepLine && this.longer) && !this.ended;
  }

  /**
   * The furthest step reached, and when it began (seconds since the start request: its
   * first record's since_spawn, or the clock now when the record has none).
   * @param {string} step
   * @param {?number} since
   * @param {number} now
   */
  enterStep(step, since, now) {
    if (step === this.step) return;
    this.step = step;
    this.stepStart = typeof since === "number" && Number.isFinite(since) ? Math.min(since, now) : now;
    this.tick(now);
  }

  /**
   * While the verdict hides the typical times (a cause is known, or the spawn ended), all
   * three lines step aside: "usually ready in 5 s" beside a problem reads as a promise.
   * They come back if the verdict shows them again (the cause went away).
   * @param {boolean} aside  @param {number} now  seconds since the start
   */
  stepAside(aside, now) {
    if (aside === this.aside) return;
    this.aside = aside;
    if (this.usually) this.usually.hidden = aside || this.ended;
    if (aside) {
      if (this.stepLine) this.stepLine.hidden = true;
      if (this.longer) this.longer.hidden = true;
    } else {
      this.tick(now);
    }
  }

  /** Every second, and when the step changes. @param {number} now  seconds since the start */
  tick(now) {
    if (!this.usable || this.aside) return;
    const view = this.step ? this.data.steps[this.step] || null : null;
    const inStep = this.step !== null && this.stepStart !== null ? Math.max(0, now - this.stepStart) : null;
    const line = stepLine(view, inStep);
    if (line === null) {
      this.stepLine.hidden = true;
    } else {
      if (this.stepLine.textContent !== line) this.stepLine.textContent = line;
      this.stepLine.hidden = false;
    }
    const totalLate = typeof this.data.total_late === "number" ? this.data.total_late : this.data.total_p90;
    const longer = isLongerThanUsual(view, inStep, totalLate, now);
    if (longer && this.longer.textContent !== this.data.longer) this.longer.textContent = this.data.longer;
    this.longer.hidden = !longer;
    if (view && inStep !== null) {
      this.options.setProgress(progressInStep(this.options.phases, view, this.step, inStep));
    }
  }

  /** The spawn ended: the ready redirect or the failure box takes over. */
  end() {
    this.ended = true;
    if (this.usually) this.usually.hidden = true;
    if (this.stepLine) this.stepLine.hidden = true;
    if (this.longer) this.longer.hidden = true;
  }
}
