// richprogress: the Kubernetes detail of a timeline row, one click away.
//
// Each row keeps its one line of sentence; a small "Details" button (a real <button>, so
// keyboard and screen readers reach it, with aria-expanded) opens a list under the
// sentence: the event's own message, reason, object, component, count, first and last
// time. Closed by default.
//
//   .rp-event > .rp-body > button.rp-details-toggle[aria-expanded][aria-controls]
//                          + dl.rp-details[hidden] > div > dt + dd
//
// The failure page renders the <dl> on the server (templates/richprogress/rows.html, the
// same labels). The live page builds it from the record only when a row is first opened
// (a 1000-row replay used to build 1000 hidden lists nobody opened); until then the
// button has no aria-controls, since the list it would name does not exist yet. One click
// listener on the list serves every row. Text only via textContent.
//
// A quiet row (.rp-event[data-show=quiet], rows.js) is muted to one line; its button opens
// it whole: the row gets [data-open=true] while its button is expanded. A quiet row always
// has the button, even with no Kubernetes detail to list (its sentence alone opens).

import { utcText } from "./clock.js";

// Characters shown as escapes, as richprogress/model/display.py does: C0 (but tab and newline),
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

// One formatter for every count: Number.toLocaleString("en-US") builds a new one per call,
// which was a fifth of the time of rendering a long timeline.
const COUNT_FORMAT = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** A repeat count as people read it (the same as display.format_count). */
export function formatCount(count) {
  const n = Number(count);
  if (!Number.isFinite(n) || n < 1) return "1";
  if (n > 1_000_000) return "1,000,000+";
  const whole = Math.floor(n);
  return whole < 1000 ? String(whole) : COUNT_FORMAT.format(whole);
}

/**
 * The rows of the details list for a record, as [label, value] pairs (empty values left out).
 * @param {import("./rows.js").EventRecord} record
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
    ["First", utcText(record.first_timestamp)],
    ["Last", utcText(record.timestamp)],
  ];
  return pairs.filter(([, value]) => value !== null && value !== undefined && value !== "");
}

let serial = 0;

/**
 * What a live row's details are built from, and what is built: keyed by the row, so a
 * refill (the count grew) updates the same button and list. Nothing of it in attributes.
 * @typedef {Object} RowDetails
 * @property {import("./rows.js").EventRecord} record
 * @property {HTMLButtonElement} button
 * @property {?HTMLElement} list   null until first opened
 */
/** @type {WeakMap<HTMLElement, RowDetails>} */
const liveRows = new WeakMap();

/** Whether a record has anything for its details list (see detailPairs). */
export function hasDetails(record) {
  return Boolean(record.reason || record.component);
}

function setOpen(button, list, open) {
  button.setAttribute("aria-expanded", open ? "true" : "false");
  if (list) list.hidden = !open;
}

/** Each row's button is named for its sentence: a screen reader's list of buttons is not
 * fifty times "Details". */
function nameButton(button, sentence) {
  button.setAttribute("aria-label", `Details of: ${sentence.slice(0, 120) || "this event"}`);
}

function toggleButton(sentence) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "rp-details-toggle";
  button.textContent = "Details";
  nameButton(button, sentence);
  button.setAttribute("aria-expanded", "false");
  return button;
}

/** Fill a details list with a record's pairs (replacing what it held). */
function fillList(list, record) {
  list.replaceChildren();
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
}

/** Build a live row's list next to its button, the first time it is opened. */
function buildList(details) {
  const list = document.createElement("dl");
  list.className = "rp-details";
  list.hidden = true;
  // a stable id per record, so aria-controls survives a refill
  list.id = `rp-details-${String(details.record.id).replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 80)}`;
  fillList(list, details.record);
  details.button.after(list);
  details.button.setAttribute("aria-controls", list.id);
  details.list = list;
  return list;
}

/** Open or close the list a toggle controls (building a live row's list on first open). */
function toggle(button) {
  const open = button.getAttribute("aria-expanded") !== "true";
  const row = button.closest(".rp-event");
  const details = row ? liveRows.get(row) : undefined;
  let list;
  if (details && details.button === button) {
    list = details.list || (open ? buildList(details) : null);
  } else {
    const id = button.getAttribute("aria-controls");
    list = id ? document.getElementById(id) : null;
  }
  setOpen(button, list, open);
  if (row && row.dataset.show === "quiet") {
    if (open) row.dataset.open = "true";
    else delete row.dataset.open;
  }
}

/**
 * One click listener for every toggle under `root` (a real button fires click for Enter
 * and Space too), instead of one listener per row.
 * @param {HTMLElement|Document} root
 */
export function listenForToggles(root) {
  root.addEventListener("click", (event) => {
    const target = /** @type {?Element} */ (event.target);
    let button = target && target.closest ? target.closest("button.rp-details-toggle") : null;
    if (!button && target && target.closest) {
      // a click anywhere on a closed quiet row opens it (its button is the keyboard's way);
      // not inside an open one, whose text people select and copy
      const quiet = target.closest('.rp-event[data-show="quiet"]:not([data-open="true"])');
      button = quiet ? quiet.querySelector("button.rp-details-toggle") : null;
    }
    if (button) toggle(button);
  });
}

/**
 * Give a live row its Details button, appended to the row's new body (the list comes
 * when first opened). A row refilled with a newer record keeps its button, its open list
 * (refilled) and, if it had it, the focus: call this while the old body is still in the
 * row, and focus the returned button once the new body has replaced it.
 * @param {HTMLElement} row   .rp-event
 * @param {HTMLElement} body  the row's new .rp-body, not yet in the row
 * @param {import("./rows.js").EventRecord} record
 * @param {string} message    the sentence the row shows (names the button)
 * @param {boolean} [always]  give it the button even with no details (a quiet row)
 * @returns {?HTMLButtonElement}  the button to focus again, if it had the focus
 */
export function attachDetails(row, body, record, message, always = false) {
  let details = liveRows.get(row);
  if (!always && !hasDetails(record)) {
    if (details) liveRows.delete(row);
    return null;
  }
  if (!details) {
    details = { record, button: toggleButton(message), list: null };
    liveRows.set(row, details);
    body.append(details.button);
    return null;
  }
  const focused = document.activeElement === details.button;
  details.record = record;
  nameButton(details.button, message);
  body.append(details.button);
  if (details.list) {
    fillList(details.list, record);
    body.append(details.list);
  }
  return focused ? details.button : null;
}

/**
 * Wire a server-rendered list (the failure page) to a new toggle before it.
 * @param {HTMLElement} row   .rp-event
 * @param {HTMLElement} list  dl.rp-details (already in the row)
 */
function wireRendered(row, list) {
  if (!list.id) {
    serial += 1;
    list.id = `rp-details-${serial}`;
  }
  const message = row.querySelector(".rp-message");
  const button = toggleButton(message ? message.textContent.trim() : "");
  button.setAttribute("aria-controls", list.id);
  list.before(button);
  setOpen(button, list, false);
}

/** The failure page: wire the server-rendered lists, with one listener for them all. */
export function wireRenderedDetails(root = document) {
  for (const list of root.querySelectorAll(".rp-event dl.rp-details")) {
    wireRendered(list.closest(".rp-event"), list);
  }
  listenForToggles(root);
}
