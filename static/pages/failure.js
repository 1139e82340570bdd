// richprogress: the failure page (templates/not_running.html), rendered on the server; this
// entry module adds its few interactive bits. An ES module, shipped as is (no build step).
//
//   Data      script#richprogress-data   {"page": "failed", "timelineUrl": ..., "copied": what
//             "Copy details" says once it copied (worded for the owner or for an admin)}
//   #rp-summary, #rp-hint, #rp-facts, #rp-timeline (the rows, rows.js's markup), a#start
//   (Relaunch, stock id), #rp-copy (Copy details; hidden without JS), #rp-copy-status,
//   pre#rp-report in details#rp-report-details, button#rp-copy-ref[data-copy]
//   details#rp-log-details (closed): #rp-log-heading, pre#rp-log (the container's last log
//             lines, redacted, text only), button#rp-copy-log (hidden without a clipboard)
//   time.rp-local          UTC time; this module appends the local time
//   .rp-fold               records folded out of view
//   Readiness: window._jupyterhub_page_loaded = true and body[data-richprogress="ready"]
//              once the module has set the page up.

import { localTime } from "../clock.js";
import { wireCopy } from "../headline.js";
import { wireRenderedDetails } from "../row-details.js";
import { el, showLocalTimes, titleTimesOnFirstLook } from "../rows.js";

/** Local times, the rows' Details buttons and the copy buttons. */
function setUpFailurePage(data) {
  for (const time of document.querySelectorAll("time.rp-local")) {
    const local = localTime(time.dateTime);
    if (local) {
      time.after(el("span", "rp-localtime", ` (${local} your time)`));
    }
  }
  const timeline = document.getElementById("rp-timeline");
  if (timeline) {
    showLocalTimes(timeline);
    titleTimesOnFirstLook(timeline);
  }
  wireRenderedDetails();
  const ref = document.getElementById("rp-copy-ref");
  if (ref) wireCopy(ref, () => ref.dataset.copy || "");
  const logLines = document.getElementById("rp-log");
  const copyLog = document.getElementById("rp-copy-log");
  if (copyLog && logLines) wireCopy(copyLog, () => logLines.textContent);
  const button = document.getElementById("rp-copy");
  const report = document.getElementById("rp-report");
  const status = document.getElementById("rp-copy-status");
  if (!button || !report || !navigator.clipboard) return;
  button.hidden = false;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(report.textContent);
      status.textContent = data.copied || "Copied.";
    } catch {
      // Clipboard refused (permissions, insecure origin): show the text to copy by hand.
      document.getElementById("rp-report-details").open = true;
      status.textContent = "Could not copy: select the report below and copy it.";
    }
  });
}

function main() {
  const script = document.getElementById("richprogress-data");
  if (!script) return;
  let data = {};
  try {
    data = JSON.parse(script.textContent) || {};
  } catch {
    // unreadable data: the page still works, with the plain confirmation
  }
  setUpFailurePage(data);
  window._jupyterhub_page_loaded = true;
  document.body.dataset.richprogress = "ready";
}

// Imported outside a browser (tests run modules under node): no page.
if (typeof document !== "undefined") main();
