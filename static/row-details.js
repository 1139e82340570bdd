// richprogress: the Kubernetes detail of a timeline row, one click away (issue 8).
//
// Each row keeps its one line of sentence; a small "Details" button (a real <button>, so
// keyboard and screen readers reach it, with aria-expanded and aria-controls) opens a list
// under the sentence: the event's own message, reason, object, component, count, first and
// last time. Closed by default.
//
//   .rp-event > .rp-body > button.rp-details-toggle[aria-expanded][aria-controls]
//                          > dl.rp-details[hidden] > div > dt + dd
//
// The failure page renders the <dl> on the server (templates/richprogress/rows.html, the
// same labels); the live page builds it here from the record. Text only via textContent.

// Characters shown as escapes, as richprogress/display.py does: C0 (but tab and newline),
// DEL, C1, and bidirectional controls that would reorder the rest of a sentence.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The longest text shown whole; the full value stays in the JSON. */
export const DISPLAY_LIMIT = 2000;

/**
 * Text made safe and short for display: controls and bidi overrides escaped, and cut with
 * "... (N more characters)" past `limit`.
 * @param {*} value
 * @param {number} [limit]
 * @returns {string}
 */
export function displayText(value, limit = DISPLAY_LIMIT) {
  const text = value === null || value === undefined ? "" : String(value);
  const extra = text.length - limit;
  const shown = extra > 0 ? text.slice(0, limit) : text;
  const escaped = shown.replace(CONTROL, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
  return extra > 0 ? `${escaped}... (${extra.toLocaleString("en-US")} more characters)` : escaped;
}

/** A repeat count as people read it (the same as display.format_count). */
export function formatCount(count) {
  const n = Number(count);
  if (!Number.isFinite(n) || n < 1) return "1";
  if (n > 1_000_000) return "1,000,000+";
  return Math.floor(n).toLocaleString("en-US");
}

function utc(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  return date.toISOString().replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC");
}

/**
 * The rows of the details list for a record, as [label, value] pairs (empty values left out).
 * @param {import("./richprogress.js").EventRecord} record
 * @returns {Array<[string, string]>}
 */
export function detailPairs(record) {
  // A message that is no Kubernetes event (the hub's own, a patience line) has nothing more to say.
  if (!record.reason && !record.component) return [];
  const obj = record.object || {};
  let object = [obj.kind, obj.name].filter(Boolean).join("/");
  if (obj.field_path) object += ` (${obj.field_path})`;
  const pairs = [
    ["Kubernetes message", record.raw_message],
    ["Reason", record.reason],
    ["Object", object],
    ["Component", record.component],
    ["Count", formatCount(record.count)],
    ["First", utc(record.first_timestamp)],
    ["Last", utc(record.timestamp)],
  ];
  return pairs.filter(([, value]) => value !== null && value !== undefined && value !== "");
}

let serial = 0;

function setOpen(button, list, open) {
  button.setAttribute("aria-expanded", open ? "true" : "false");
  list.hidden = !open;
}

/**
 * Give a row its toggle button, wired to the row's details list.
 * @param {HTMLElement} row   .rp-event
 * @param {HTMLElement} list  dl.rp-details (already in the row)
 * @param {boolean} [open]    whether it starts open (kept across a row's refill)
 */
export function wireDetails(row, list, open = false) {
  if (!list.id) {
    serial += 1;
    list.id = `rp-details-${serial}`;
  }
  const button = document.createElement("button");
  button.type = "button";
  button.className = "rp-details-toggle";
  button.textContent = "Details";
  button.setAttribute("aria-controls", list.id);
  const message = row.querySelector(".rp-message");
  button.setAttribute("aria-label", `Details of: ${message ? message.textContent.slice(0, 120) : "this event"}`);
  button.addEventListener("click", () => setOpen(button, list, button.getAttribute("aria-expanded") !== "true"));
  list.before(button);
  setOpen(button, list, open);
}

/** Whether a row's details are open now (to keep them open when the row is refilled). */
export function detailsOpen(row) {
  const button = row.querySelector(".rp-details-toggle");
  return button !== null && button.getAttribute("aria-expanded") === "true";
}

/**
 * Build a record's details list into a row (the live page) and wire its toggle.
 * @param {HTMLElement} row
 * @param {import("./richprogress.js").EventRecord} record
 * @param {boolean} [open]
 */
export function attachDetails(row, record, open = false) {
  const body = row.querySelector(".rp-body") || row;
  const list = document.createElement("dl");
  list.className = "rp-details";
  for (const [label, value] of detailPairs(record)) {
    const item = document.createElement("div");
    const term = document.createElement("dt");
    term.textContent = label;
    const data = document.createElement("dd");
    data.textContent = displayText(value);
    if (label === "Kubernetes message") data.className = "rp-raw";
    item.append(term, data);
    list.append(item);
  }
  if (!list.childElementCount) return;
  // a stable id per record, so aria-controls survives a refill
  list.id = `rp-details-${String(record.id).replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 80)}`;
  body.append(list);
  wireDetails(row, list, open);
}

/** The failure page: wire the server-rendered lists. */
export function wireRenderedDetails(root = document) {
  for (const list of root.querySelectorAll(".rp-event dl.rp-details")) {
    wireDetails(list.closest(".rp-event"), list, false);
  }
}
