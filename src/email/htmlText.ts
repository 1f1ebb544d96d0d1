import { compile } from 'html-to-text';

/**
 * HTML longer than this (in characters) is cut before it is read: the rest is dropped and the
 * text ends with a line saying so. Mail clients clip long HTML too (Gmail at about 100 KB).
 */
export const HTML_MAX_CHARS = 500_000;

/** The text of an email body is at most this long; a longer one is cut and ends with a line saying so. */
export const BODY_MAX_CHARS = 200_000;

/** Reading HTML stops once its text (with the markup kept) reaches this many characters. */
export const HTML_TEXT_MAX_CHARS = 100_000;

// Before html-to-text reads the HTML, a single linear pass keeps only the elements that shape
// the text (paragraphs, lists, tables, headings, line breaks), without attributes, at most this
// many and this deep: the parser underneath slows down quadratically with nesting depth, and its
// cost grows with every element, so hostile markup stays cheap whatever it holds.
const MAX_ELEMENTS = 3_000;
const MAX_DEPTH = 32;

/** The elements that shape text (kept, without attributes); every other tag is dropped, its text kept. */
// biome-ignore format: a word list
const KEPT = new Set([
  'p', 'div', 'br', 'hr', 'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'table', 'caption', 'tr', 'td', 'th',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'section', 'article', 'header',
  'footer', 'nav', 'main', 'aside', 'figure', 'figcaption', 'address',
]);
const VOID_KEPT = new Set(['br', 'hr']);
/** Elements whose content is not markup: skipped to their end tag in one search. */
const RAW_TEXT = new Set(['script', 'style', 'title', 'textarea', 'xmp', 'iframe', 'noembed', 'noframes']);
/** Elements whose content is never text for a reader. */
const SKIPPED = new Set(['head', 'template', 'svg', 'math', 'object', 'select', 'noscript']);
/** An opening tag closes an open element of these names first (as HTML parsers do). */
const CLOSES: Record<string, readonly string[]> = {
  p: ['p'],
  li: ['li'],
  dt: ['dt', 'dd'],
  dd: ['dt', 'dd'],
  tr: ['tr', 'td', 'th'],
  td: ['td', 'th'],
  th: ['td', 'th'],
};

const convert = compile({
  wordwrap: false,
  selectors: [
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((h) => ({
      selector: h,
      options: { uppercase: false, leadingLineBreaks: 2, trailingLineBreaks: 1 },
    })),
    { selector: 'table', format: 'block', options: { leadingLineBreaks: 2, trailingLineBreaks: 2 } },
    { selector: 'tr', format: 'block', options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
    { selector: 'td', format: 'tableCell' },
    { selector: 'th', format: 'tableCell' },
    { selector: 'hr', options: { length: 20 } },
    // Links and images never reach the converter (their tags are dropped, link text kept); this
    // says so again should that change: no `[https://…]` after each link, no image names.
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
  ],
  formatters: {
    // Cells of a row on one line, apart: layout tables read as paragraphs, data tables as rows.
    tableCell(elem, walk, builder) {
      walk(elem.children, builder);
      builder.addLiteral('   ');
    },
  },
  // The reduced HTML holds at most MAX_ELEMENTS elements this deep: these limits are never reached.
  limits: { maxDepth: MAX_DEPTH + 8, ellipsis: '', maxInputLength: HTML_MAX_CHARS },
});

/**
 * An HTML email body as readable text: paragraphs, list items, table rows and line breaks on their
 * own lines, entities decoded, scripts, styles, images and link targets left out, blank runs
 * collapsed. At most {@link HTML_MAX_CHARS} of the HTML are read, and less when its text fills
 * {@link HTML_TEXT_MAX_CHARS}; what was not read is named in a last line. Time and memory grow
 * linearly with what is read, whatever the markup (unclosed tags, `<` without `>`, deep nesting).
 */
export function htmlToText(html: string): string {
  const { simple, read } = simplifyHtml(html);
  const text = tidy(convert(simple).replaceAll(LT, '<'));
  if (read >= html.length) return text;
  const note = `[The rest of this HTML email was cut: only the first ${read} of its ${html.length} characters were read.]`;
  return text ? `${text}\n\n${note}` : note;
}

/**
 * A body's text, at most {@link BODY_MAX_CHARS} long: a longer one is cut and ends with a line
 * saying how much was left out.
 */
export function cutText(text: string, max = BODY_MAX_CHARS): string {
  if (text.length <= max) return text;
  const note = `\n\n[The rest of this email was cut: it is ${text.length} characters long, and only the first ${max} are kept.]`;
  return `${text.slice(0, Math.max(0, max - note.length)).trimEnd()}${note}`;
}

/** Line ends trimmed, runs of (non-breaking) spaces shortened, at most one blank line in a row. */
function tidy(text: string): string {
  const lines: string[] = [];
  for (const raw of text.replaceAll('\u00a0', ' ').split('\n')) {
    const line = raw.trimEnd().replace(/ {4,}/gu, '   ');
    if (line === '' && (lines.length === 0 || lines.at(-1) === '')) continue;
    lines.push(line);
  }
  while (lines.at(-1) === '') lines.pop();
  return lines.join('\n');
}

// A `<` that is text stands in as a private-use character until the text is out: escaped as
// `&lt;` it would cost the converter an entity each, and hostile bodies hold millions.
const LT = '\ue000';

/**
 * The HTML reduced to the elements that shape text, without attributes, comments or scripts, and
 * how many of its characters were read (all, unless the input or the reduced HTML reached its
 * cap). One pass; each character is read a bounded number of times. Text is copied as it is
 * (entities are decoded later).
 */
export function simplifyHtml(html: string): { simple: string; read: number } {
  const out = new HtmlWriter();
  const n = Math.min(html.length, HTML_MAX_CHARS);
  let i = 0;
  let textStart = 0;
  // Text up to `end`, as much as fits; false when it did not all fit (reading stops there).
  const flush = (end: number) => {
    const room = Math.max(0, HTML_TEXT_MAX_CHARS - out.length);
    const fits = end - textStart <= room ? end : textCut(html, textStart, textStart + room);
    out.text(html.slice(textStart, fits));
    i = fits;
    return fits === end;
  };
  while (i < n && out.length < HTML_TEXT_MAX_CHARS) {
    const lt = html.indexOf('<', i);
    if (lt === -1 || lt >= n) break;
    const next = html.charCodeAt(lt + 1);
    const closing = next === SLASH;
    const nameStart = closing ? lt + 2 : lt + 1;
    const nameEnd = tagNameEnd(html, nameStart);
    if (nameEnd === nameStart && !closing && next !== BANG && next !== QUESTION) {
      i = lt + 1; // a `<` that starts no tag is text
      continue;
    }
    if (!flush(lt)) return { simple: out.toString(), read: i };
    if (nameEnd === nameStart) {
      // A comment, a doctype, CDATA, a processing instruction or a bogus end tag: dropped.
      const comment = html.startsWith('<!--', lt);
      const end = comment ? html.indexOf('-->', lt + 4) : html.indexOf('>', lt);
      i = end === -1 ? n : end + (comment ? 3 : 1);
    } else {
      // An input that ends inside a tag drops the tag, as browsers do.
      const end = tagEnd(html, nameEnd);
      i = end === -1 ? n : end + 1;
      const name = html.slice(nameStart, nameEnd).toLowerCase();
      if (end !== -1 && closing) out.close(name);
      else if (end !== -1 && RAW_TEXT.has(name)) i = rawTextEnd(html, i, name);
      else if (end !== -1) out.open(name, html.charCodeAt(end - 1) === SLASH);
    }
    textStart = i = Math.min(i, n);
  }
  if (out.length < HTML_TEXT_MAX_CHARS) flush(n < html.length ? textCut(html, textStart, n) : n);
  return { simple: out.toString(), read: Math.max(i, textStart) };
}

/** Where text cut at `at` ends: not inside an entity (`&nbs`) or between the halves of a surrogate pair. */
function textCut(html: string, from: number, at: number): number {
  const tailStart = Math.max(from, at - 32);
  const tail = html.slice(tailStart, at);
  const amp = tail.lastIndexOf('&');
  let cut = amp !== -1 && !tail.includes(';', amp) ? tailStart + amp : at;
  const last = html.charCodeAt(cut - 1);
  if (cut > from && last >= 0xd800 && last <= 0xdbff) cut -= 1;
  return cut;
}

const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const GT = 0x3e;

/** Where the tag name starting at `start` ends (`start` itself when no ASCII letter starts one). */
function tagNameEnd(html: string, start: number): number {
  const first = html.charCodeAt(start) | 0x20;
  if (first < 0x61 || first > 0x7a) return start;
  let end = start + 1;
  for (; end < html.length; end += 1) {
    const c = html.charCodeAt(end);
    const letter = (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a;
    if (!letter && !(c >= 0x30 && c <= 0x39) && c !== 0x2d && c !== 0x3a && c !== 0x5f) break;
  }
  return end;
}

/**
 * The index of the `>` that ends a tag whose attributes start at `from`, with quoted attribute
 * values read as values (a `>` inside one does not end the tag), or -1 when the input ends first.
 */
function tagEnd(html: string, from: number): number {
  let quote = 0;
  let afterEquals = false;
  for (let i = from; i < html.length; i += 1) {
    const c = html.charCodeAt(i);
    if (quote) {
      if (c === quote) quote = 0;
      continue;
    }
    if (c === GT) return i;
    if (afterEquals && (c === 0x22 || c === 0x27)) quote = c;
    if (c === 0x3d) afterEquals = true;
    else if (c > 0x20) afterEquals = false;
  }
  return -1;
}

/** Where the content of a raw-text element (`<script>`…) ends: after its end tag, or the input's end. */
function rawTextEnd(html: string, from: number, name: string): number {
  const endTag = new RegExp(`</${name}[\\s/>]`, 'giu');
  endTag.lastIndex = from;
  const found = endTag.exec(html);
  if (!found) return html.length;
  const close = html.indexOf('>', found.index);
  return close === -1 ? html.length : close + 1;
}

/** Writes the simplified HTML, keeping count of the elements and their depth. */
class HtmlWriter {
  private readonly parts: string[] = [];
  private readonly stack: string[] = [];
  private readonly openCount = new Map<string, number>();
  private readonly dropped = new Map<string, number>();
  private skipping: { name: string; depth: number } | undefined;
  private elements = 0;
  /** Characters written so far. */
  length = 0;

  text(value: string): void {
    if (value !== '' && !this.skipping) this.push(value.replaceAll(LT, '\ufffd').replaceAll('<', LT));
  }

  open(name: string, selfClosing: boolean): void {
    if (this.skipping) {
      if (name === this.skipping.name && !selfClosing) this.skipping.depth += 1;
      return;
    }
    if (SKIPPED.has(name)) {
      if (!selfClosing) this.skipping = { name, depth: 1 };
      return;
    }
    if (!KEPT.has(name)) return;
    const closes = CLOSES[name];
    while (closes && this.stack.length > 0 && closes.includes(this.stack.at(-1) as string)) this.pop();
    if (this.elements >= MAX_ELEMENTS || (!VOID_KEPT.has(name) && this.stack.length >= MAX_DEPTH)) {
      // Past the budget, an element is a space: its text stays, its shape goes.
      if (!VOID_KEPT.has(name)) this.count(this.dropped, name, 1);
      this.push(' ');
      return;
    }
    this.elements += 1;
    this.push(`<${name}>`);
    if (VOID_KEPT.has(name) || selfClosing) return;
    this.stack.push(name);
    this.count(this.openCount, name, 1);
  }

  close(name: string): void {
    if (this.skipping) {
      if (name === this.skipping.name && --this.skipping.depth === 0) this.skipping = undefined;
      return;
    }
    if (!KEPT.has(name) || VOID_KEPT.has(name)) return;
    if ((this.dropped.get(name) ?? 0) > 0) {
      this.count(this.dropped, name, -1);
      this.push(' ');
      return;
    }
    if ((this.openCount.get(name) ?? 0) === 0) return; // an end tag with nothing to end
    while (this.stack.length > 0) if (this.pop() === name) break;
    this.push(`</${name}>`);
  }

  toString(): string {
    return this.parts.join('');
  }

  private push(part: string): void {
    this.parts.push(part);
    this.length += part.length;
  }

  private pop(): string {
    const name = this.stack.pop() as string;
    this.count(this.openCount, name, -1);
    return name;
  }

  private count(map: Map<string, number>, name: string, by: number): void {
    map.set(name, (map.get(name) ?? 0) + by);
  }
}
