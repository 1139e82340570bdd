// richprogress: the pages' clock and durations, written as richprogress/model/times.py
// writes them (tests/web/test_vocabulary_js.py runs both on the same seconds), and local times.
// Every elapsed figure is whole seconds rounded down, like a stopwatch, so no two of them
// disagree by one rounded up; every figure is the hub's or the cluster's time, never the
// browser's wall clock.

/** "+m:ss" (or "+h:mm:ss") since the spawn started; "" when unknown. */
export function formatClock(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "";
  return "+" + formatElapsed(seconds);
}

/** "7 s", "2 min 31 s", "1 h 02 min" (model/times.py format_duration); "" if unknown.
 * Cut to the whole second, as the clock is: stopped at "+0:01" is "1 s", never "2 s". */
export function formatDuration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "";
  const total = Math.max(0, Math.floor(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h) return `${h} h ${String(m).padStart(2, "0")} min`;
  if (m) return `${m} min ${String(s).padStart(2, "0")} s`;
  return `${s} s`;
}

/** "m:ss" (or "h:mm:ss"). */
export function formatElapsed(seconds) {
  const total = Math.max(0, Math.floor(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

// One formatter each for the page: toLocaleString() builds a new one per call, which made
// rendering a long timeline slow (about a third of a millisecond per row).
const formats = new Map();
function format(name, options) {
  let found = formats.get(name);
  if (!found) {
    found = new Intl.DateTimeFormat(undefined, options);
    formats.set(name, found);
  }
  return found;
}

function parsed(iso) {
  if (!iso) return null;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** An ISO 8601 time in the browser's time zone and locale; "" when it does not parse. */
export function localTime(iso) {
  const date = parsed(iso);
  return date ? format("local", { dateStyle: "medium", timeStyle: "medium" }).format(date) : "";
}

// A spawn's rows share a few stamps (Kubernetes' whole seconds): each is worded once.
const SEEN_LIMIT = 2000;
const seenTimes = new Map();

/**
 * A row's wall time in the viewer's zone, the zone named: "11:46:28 PM PST",
 * "23:46:28 CET"; "" when it does not parse. (The failure page renders "07:46:28 UTC" on the
 * server; rows.js shows this in its place.)
 * @param {?string} iso
 */
export function localClockTime(iso) {
  const key = String(iso);
  let text = seenTimes.get(key);
  if (text === undefined) {
    const date = parsed(iso);
    text = date
      ? format("clock", { hour: "numeric", minute: "2-digit", second: "2-digit", timeZoneName: "short" }).format(date)
      : "";
    if (seenTimes.size >= SEEN_LIMIT) seenTimes.clear();
    seenTimes.set(key, text);
  }
  return text;
}

/** "2026-11-30 07:46:28 UTC" (model/times.py format_utc); "" when it does not parse. */
export function utcText(iso) {
  const date = parsed(iso);
  return date ? date.toISOString().replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC") : "";
}

/**
 * A row time's tooltip: the full local time with its zone, and UTC:
 * "Nov 29, 2026, 11:46:28 PM PST (2026-11-30 07:46:28 UTC)"; "" when it does not parse.
 * @param {?string} iso
 */
export function fullTime(iso) {
  const date = parsed(iso);
  if (!date) return "";
  const local = format("full", { dateStyle: "medium", timeStyle: "long" }).format(date);
  return `${local} (${utcText(iso)})`;
}
