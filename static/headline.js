// richprogress: a failure's headline as the viewer reads it, and the copy buttons of both
// pages. Built with text nodes, never HTML.
//
//   #rp-failure-summary     the sentence (pending page, once the spawn failed)
//   #rp-failure-ref-line    its long name (an image) on a line of its own, hidden without
//     > code#rp-failure-ref   one, in monospace, with a copy button
//     + button#rp-failure-copy-ref

import { appendBreakable, headlineParts } from "./breaks.js";

/**
 * The diagnosis as the viewer reads it (richprogress/web/views/rows.py for_viewer): an admin
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
export function showHeadline(summary, text) {
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

/**
 * A button that copies a text; says "Copied" for a moment (or that it could not). Hidden
 * where the browser has no clipboard (an insecure origin).
 * @param {?HTMLElement} button
 * @param {() => string} text
 */
export function wireCopy(button, text) {
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
