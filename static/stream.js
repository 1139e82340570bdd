// richprogress: the pending page's progress stream, JupyterHub's EventSource of the spawn.
//
// The page's first inline script opens it: window.richprogressOpenProgress() (it names the
// progress URL and EventSource, as the stock page's first script does; without it the
// stream opens on data.progressUrl). EventSource reconnects by itself; the hub replays the
// spawn's events from the start on every (re)connection, and rows keyed by record id make
// the replay update rows instead of adding them. ContactWatch (connection.js) says "Lost
// contact with the hub" when the stream does not come back.

import { ContactWatch } from "./connection.js";

/**
 * One message of JupyterHub's progress event stream.
 * @typedef {Object} ProgressEvent
 * @property {number} [progress]  0-100
 * @property {string} [message]   plain text
 * @property {import("./rows.js").EventRecord} [record]
 * @property {boolean} [ready]
 * @property {boolean} [failed]
 * @property {string} [url]
 * @property {?import("./live-diagnosis.js").LiveDiagnosis} [diagnosis]  the live cause, when
 *           it changed (null: cleared); shown by live-diagnosis.js
 * @property {Array<string>} [resolved]  ids of earlier problem rows this event's record got
 *           past (richprogress/story/resolved.py): shown quiet, with the overcome pill
 */

export class ProgressStream {
  /**
   * @param {object} page  what ContactWatch follows: .finished, .timer, .tick(), .data
   *                       (.progressUrl, .pageUrl)
   * @param {(evt: ProgressEvent) => void} onEvent  each message, parsed
   */
  constructor(page, onEvent) {
    this.page = page;
    this.onEvent = onEvent;
    this.source = null;
    this.contact = new ContactWatch(page);
  }

  open() {
    this.source =
      typeof window.richprogressOpenProgress === "function"
        ? window.richprogressOpenProgress()
        : new EventSource(this.page.data.progressUrl);
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

  /** Drop the stream and open a new one, as a network blip would. */
  reconnect() {
    this.close();
    this.open();
  }

  close() {
    if (this.source) this.source.close();
  }
}
