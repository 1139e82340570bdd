// richprogress: the pages' clock and durations, written as richprogress/model/times.py
// writes them (tests/test_vocabulary_js.py runs both on the same seconds), and local times.
// Every figure is the hub's or the cluster's time, never the browser's wall clock.

/** "+m:ss" (or "+h:mm:ss") since the spawn started; "" when unknown. */
export function formatClock(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "";
  return "+" + formatElapsed(seconds);
}

/** "7 s", "2 min 31 s", "1 h 02 min" (model/times.py format_duration); "" if unknown. */
export function formatDuration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "";
  // Python's round() halves to even; the hub's figures are milliseconds apart from .5
  const total = Math.max(0, Math.round(seconds));
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

// One formatter for the page: toLocaleString() builds a new one per call, which made
// rendering a long timeline slow (about a third of a millisecond per row).
let localFormat = null;

/** An ISO 8601 time in the browser's time zone and locale; "" when it does not parse. */
export function localTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  if (localFormat === null) {
    localFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
  }
  return localFormat.format(date);
}
