// richprogress: long names (image references, node names) that break only where a reader
// expects: after "/" and ":" (and "." in host names), never at a hyphen, which reads like a
// typo ("no-/such-notebook"). Built with text nodes and <wbr> elements, never HTML.
// The failure page gets the same parts from richprogress/web/views/rows.py (breakable_parts);
// keep the two in step (tests/web/test_row_text.py runs both on the same table).

/** Tokens this long or longer that hold one of "-/:." are kept whole between break points. */
export const LONG_NAME = 16;
const SPLIT_AFTER = /(?<=[/:.])/;

// The parts of each distinct text are worked out once: a stream replay (a reconnect, a
// reload) and a repeat that refills its row bring the same sentences again.
const SEEN_LIMIT = 2000;
/** @type {Map<string, ReadonlyArray<[string, boolean]>>} */
const seenParts = new Map();

/**
 * Parts of a text: [text, keepWhole] pairs. keepWhole parts are a piece of a long name,
 * to be shown unbroken, each followed by a break opportunity. The array is shared by
 * every caller of the same text: read it, don't change it.
 * @param {string} text
 * @returns {ReadonlyArray<[string, boolean]>}
 */
export function breakableParts(text) {
  const key = String(text);
  let parts = seenParts.get(key);
  if (parts === undefined) {
    parts = splitParts(key);
    // bounded: a long spawn's distinct sentences, not every string a page ever showed
    if (seenParts.size >= SEEN_LIMIT) seenParts.clear();
    seenParts.set(key, parts);
  }
  return parts;
}

/** breakableParts without the memo. @param {string} text */
function splitParts(text) {
  const parts = [];
  let plain = "";
  for (const token of text.split(/(\s+)/)) {
    if (token.length >= LONG_NAME && /[-/:.]/.test(token) && !/\s/.test(token)) {
      if (plain) parts.push([plain, false]);
      plain = "";
      for (const piece of token.split(SPLIT_AFTER)) parts.push([piece, true]);
    } else {
      plain += token;
    }
  }
  if (plain) parts.push([plain, false]);
  return parts;
}

// A piece made only of letters, digits and "_" (plus its closing "/", ":" or ".") has no
// break opportunity inside (Unicode line breaking never breaks between letters and digits,
// nor before "/", ":" or "."), so it needs no nowrap span of its own: a text node is
// enough. Only a piece that could break inside (at a hyphen, say) gets span.rp-nobr.
// About half the elements of a long name, on every row that names an image: fewer to lay out.
const UNBREAKABLE = /^[A-Za-z0-9_]*[/:.]?$/;

/**
 * Append `text` to `parent` so that long names break only after "/", ":" or ".".
 * @param {HTMLElement} parent
 * @param {string} text
 */
export function appendBreakable(parent, text) {
  const parts = breakableParts(text);
  const nodes = [];
  for (let i = 0; i < parts.length; i++) {
    const [piece, whole] = parts[i];
    if (!whole) {
      nodes.push(piece);
      continue;
    }
    if (UNBREAKABLE.test(piece)) {
      nodes.push(piece);
    } else {
      const span = document.createElement("span");
      span.className = "rp-nobr";
      span.textContent = piece;
      nodes.push(span);
    }
    // after a name's last piece comes white space or the end: a break is possible there
    // without a <wbr>
    if (i + 1 < parts.length && parts[i + 1][1]) nodes.push(document.createElement("wbr"));
  }
  parent.append(...nodes);
}

/** A name worth its own line in a headline (see richprogress/web/views/rows.py headline_parts). */
const REFERENCE = /["'“]?(?<ref>[^\s"'“”]{12,}?)["'”]?(?=[.,;:!?)]*(?:\s|$))/g;

/**
 * [headline, reference]: the first long name of a headline taken out, so it can stand on
 * its own line in monospace. "The image X does not exist." -> ["The image does not
 * exist.", "X"]; [text, ""] when there is none or the sentence would lose its subject.
 * @param {string} text
 * @returns {[string, string]}
 */
/** What an image reference (or a similar name) is made of (web/views/rows.py _NAME). */
const NAME = /^[A-Za-z0-9._\/:@+-]+$/;

export function headlineParts(text) {
  for (const match of String(text).matchAll(REFERENCE)) {
    const ref = match.groups.ref;
    if ((ref.includes("/") || ref.includes(":")) && !ref.endsWith(":")) {
      // not a name a registry could hold: keep the sentence whole (richprogress/web/views/rows.py)
      if (!NAME.test(ref)) return [text, ""];
      const before = text.slice(0, match.index).trimEnd();
      const after = text.slice(match.index + match[0].length).trimStart();
      if (!before) return [text, ""];
      const joiner = !after || ".,;:!?)".includes(after[0]) ? "" : " ";
      return [before + joiner + after, ref];
    }
  }
  return [text, ""];
}
