// richprogress: notice when the pending page's progress stream has lost the hub.
//
// A hub restart (every z2jh `helm upgrade`), a stream answered 404, or a network gone for
// good leave an EventSource retrying (or closed) without a word, and the page's clock
// would tick "Starting your server" forever. ContactWatch follows the page's stream:
//   - an error that is not followed by the stream opening again within LOST_AFTER_MS
//     (or a stream the browser closed for good) shows #rp-lost, "Lost contact with the
//     hub", and stops the clock;
//   - it then asks the hub for this page every few seconds (growing to PROBE_MAX_MS, short
//     enough that a page says "Lost" at most a few seconds after the hub is back; a probe
//     the hub does not answer within PROBE_TIMEOUT_MS is given up, so a half-started hub
//     that accepts connections and says nothing cannot hold the next probe back); as
//     soon as the hub itself answers (a status below 500, as JupyterHub shows a server
//     that is not running with 404, and its X-JupyterHub-Version header, which a proxy's
//     own answers lack), it reloads: the hub then shows the live spawn, the server, or the
//     failure page, whichever is true now;
//   - a stream that opens again by itself first hides the notice and restarts the clock.
// DOM: div#rp-lost.alert (made here with createElement) after #progress-message, holding
// p#rp-lost-text. Text only through textContent.

export const LOST_AFTER_MS = 4000;
export const PROBE_FIRST_MS = 2000;
export const PROBE_MAX_MS = 4000;
export const PROBE_TIMEOUT_MS = 5000;

export class ContactWatch {
  /**
   * @param {object} page  the PendingPage: .finished, .timer, .tick(), .data.pageUrl
   * @param {object} [env] injectable timers and fetch, for tests
   */
  constructor(page, env = {}) {
    this.page = page;
    this.setTimeout = env.setTimeout || window.setTimeout.bind(window);
    this.clearTimeout = env.clearTimeout || window.clearTimeout.bind(window);
    this.fetch = env.fetch || window.fetch.bind(window);
    this.AbortController = env.AbortController || globalThis.AbortController;
    this.reload = env.reload || (() => window.location.reload());
    this.lost = false;
    this.grace = null;
    this.probeTimer = null;
    this.probeDelay = PROBE_FIRST_MS;
  }

  /** Watch a (new) EventSource of the page. */
  follow(source) {
    this.source = source;
    const heard = () => {
      if (this.source === source) this.back();
    };
    source.addEventListener("open", heard);
    source.addEventListener("message", heard);
    source.addEventListener("error", () => {
      if (this.source !== source || this.page.finished || this.lost) return;
      if (source.readyState === 2) {
        this.loseContact(); // closed for good (e.g. the stream answered 404)
      } else if (this.grace === null) {
        this.grace = this.setTimeout(() => {
          this.grace = null;
          if (!this.page.finished) this.loseContact();
        }, LOST_AFTER_MS);
      }
    });
  }

  back() {
    if (this.grace !== null) {
      this.clearTimeout(this.grace);
      this.grace = null;
    }
    if (!this.lost) return;
    this.lost = false;
    if (this.probeTimer !== null) this.clearTimeout(this.probeTimer);
    this.probeTimer = null;
    const box = document.getElementById("rp-lost");
    if (box) box.hidden = true;
    if (typeof this.page.contactBack === "function") this.page.contactBack();
    if (!this.page.finished && !this.page.timer) {
      this.page.timer = window.setInterval(() => this.page.tick(), 1000);
    }
  }

  loseContact() {
    this.lost = true;
    // the clock would only count how long we have not heard from the hub
    window.clearInterval(this.page.timer);
    this.page.timer = null;
    this.showNotice();
    // the page's verdict for a lost stream: no "still trying" from a hub it cannot hear
    if (typeof this.page.contactLost === "function") this.page.contactLost();
    this.probeDelay = PROBE_FIRST_MS;
    this.scheduleProbe();
  }

  showNotice() {
    let box = document.getElementById("rp-lost");
    if (!box) {
      box = document.createElement("div");
      box.id = "rp-lost";
      box.className = "alert alert-warning rp-lost";
      box.setAttribute("role", "alert");
      const text = document.createElement("p");
      text.id = "rp-lost-text";
      text.className = "mb-0";
      box.append(text);
      const anchor = document.getElementById("progress-message");
      if (anchor) anchor.after(box);
      else document.body.prepend(box);
    }
    document.getElementById("rp-lost-text").textContent =
      "Lost contact with the hub. It may be restarting: this page reloads as soon as the hub answers.";
    box.hidden = false;
  }

  scheduleProbe() {
    this.probeTimer = this.setTimeout(() => this.probe(), this.probeDelay);
    this.probeDelay = Math.min(this.probeDelay * 2, PROBE_MAX_MS);
  }

  async probe() {
    this.probeTimer = null;
    if (!this.lost || this.page.finished) return;
    const abort = this.AbortController ? new this.AbortController() : null;
    const giveUp = abort ? this.setTimeout(() => abort.abort(), PROBE_TIMEOUT_MS) : null;
    try {
      const response = await this.fetch(this.page.data.pageUrl, {
        cache: "no-store",
        credentials: "same-origin",
        headers: { Accept: "text/html" },
        signal: abort ? abort.signal : undefined,
      });
      // The hub itself, not a proxy standing in for it: configurable-http-proxy answers
      // 404 for every path until the restarted hub has added its route again.
      if (response.status < 500 && response.headers && response.headers.get("X-JupyterHub-Version")) {
        this.reload();
        return;
      }
    } catch {
      // still gone, or silent past PROBE_TIMEOUT_MS: try again later
    } finally {
      if (giveUp !== null) this.clearTimeout(giveUp);
    }
    if (this.lost) this.scheduleProbe();
  }
}
