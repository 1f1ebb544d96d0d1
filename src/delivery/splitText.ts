import { TroupeError } from '../ports/troupeError.js';

/** The smallest limit {@link splitText} accepts: room for a reopened code fence and some text. */
export const MIN_SPLIT_LENGTH = 20;

/**
 * Splits `text` into parts of at most `maxLength` UTF-16 code units (how Discord counts its 2000),
 * for transports that cap a message's length. Pure.
 *
 * - A text within the limit comes back unchanged as `[text]`; an empty or blank one as `[]`.
 * - Each part ends at the last break that fits, preferring, in order: a paragraph break (blank
 *   line), a line break, a sentence end, any whitespace. Only a single word longer than the limit
 *   is cut, between grapheme clusters (emoji, flags and accents stay whole; a cluster longer than a
 *   whole part is cut between code points, never inside a surrogate pair).
 * - Whitespace at part boundaries is dropped (inside a code block a continued line keeps its
 *   indentation), and no part is empty.
 * - A part that ends inside a fenced code block (```` ``` ```` or `~~~`) gets a closing fence, and
 *   the next part reopens it with the same opening line (language tag included); the added
 *   characters count towards the limit.
 *
 * Throws `TROUPE_TRANSPORT_LIMIT_INVALID` for a `maxLength` below {@link MIN_SPLIT_LENGTH}.
 */
export function splitText(text: string, maxLength: number): string[] {
  if (!Number.isInteger(maxLength) || maxLength < MIN_SPLIT_LENGTH) {
    throw new TroupeError(
      'TROUPE_TRANSPORT_LIMIT_INVALID',
      `A transport's text limit must be a whole number of at least ${MIN_SPLIT_LENGTH} characters; got ${String(maxLength)}.`,
      { details: { maxLength } },
    );
  }
  if (text.trim() === '') return [];
  if (text.length <= maxLength) return [text];
  return new Splitter(text, maxLength).split();
}

/** A fenced code block, by positions in the text. */
interface Fence {
  /** Start of the opening fence line. */
  openStart: number;
  /** End of the opening fence line (its `\n`, or the end of the text). */
  openEnd: number;
  /** Start of the closing fence line (the text's length when the block is never closed). */
  closeStart: number;
  /** End of the closing fence line (its `\n`, or the end of the text). */
  closeEnd: number;
  closed: boolean;
  /** Added at the start of a part that begins inside the block: the opening line and `\n`. */
  reopen: string;
  /** Added at the end of a part that ends inside the block: `\n` and the fence marker. */
  close: string;
}

const OPENING_FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const CLOSING_FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const SENTENCE_END = new Set(['.', '!', '?', '…', '‽']);
const SENTENCE_END_NO_SPACE = new Set(['。', '！', '？', '｡']);
const CLOSING_PUNCTUATION = new Set(['"', "'", ')', ']', '}', '»', '”', '’', '」', '』', '*', '_']);
const NO_FENCE = -1;

type Rank = 'paragraph' | 'line' | 'sentence' | 'space';
type Rules = 'strict' | 'relaxed' | 'any';

class Splitter {
  private readonly n: number;
  /** `isSpace[i]`: the code unit at `i` is whitespace. */
  private readonly isSpace: Uint8Array;
  /** `nonSpaceBefore[i]`: how many non-whitespace code units precede `i`. */
  private readonly nonSpaceBefore: Int32Array;
  /** `lastNonSpace[i]`: the index of the last non-whitespace code unit before `i`, or -1. */
  private readonly lastNonSpace: Int32Array;
  /** `fenceAt[i]`: the repairable fence whose lines span position `i`, or {@link NO_FENCE}. */
  private readonly fenceAt: Int32Array;
  private readonly fences: Fence[];
  private segmenter: Intl.Segmenter | undefined;

  constructor(
    private readonly text: string,
    private readonly maxLength: number,
  ) {
    const n = text.length;
    this.n = n;
    this.isSpace = new Uint8Array(n);
    this.nonSpaceBefore = new Int32Array(n + 1);
    this.lastNonSpace = new Int32Array(n + 1);
    let count = 0;
    let last = -1;
    for (let i = 0; i < n; i++) {
      this.nonSpaceBefore[i] = count;
      this.lastNonSpace[i] = last;
      if (isWhitespace(text.charCodeAt(i))) {
        this.isSpace[i] = 1;
      } else {
        count++;
        last = i;
      }
    }
    this.nonSpaceBefore[n] = count;
    this.lastNonSpace[n] = last;
    this.fences = findFences(text, maxLength);
    this.fenceAt = new Int32Array(n + 1).fill(NO_FENCE);
    this.fences.forEach((fence, index) => {
      const end = fence.closed ? fence.closeEnd : n + 1;
      this.fenceAt.fill(index, fence.openStart, end);
    });
  }

  split(): string[] {
    const parts: string[] = [];
    const lastNonSpace = this.lastNonSpace[this.n] ?? -1;
    let start = this.nextStart(0);
    while (start <= lastNonSpace) {
      const reopen = this.reopenAt(start);
      if (reopen.length + (lastNonSpace + 1 - start) <= this.maxLength) {
        parts.push(reopen + this.text.slice(start, lastNonSpace + 1));
        break;
      }
      const cut = this.findCut(start);
      parts.push(reopen + this.text.slice(start, this.trimmedEnd(cut)) + this.closeAt(cut));
      start = this.nextStart(cut);
    }
    return parts;
  }

  /** Where the next part starts after a cut: past whitespace, keeping a code line's indentation. */
  private nextStart(cut: number): number {
    let i = cut;
    let lastNewline = -1;
    while (i < this.n && this.isSpace[i] === 1) {
      if (this.text.charCodeAt(i) === 10) lastNewline = i;
      i++;
    }
    if (lastNewline >= 0 && i < this.n) {
      const fence = this.fence(i);
      if (fence && i > fence.openEnd && i < fence.closeStart) return lastNewline + 1;
    }
    return i;
  }

  private fence(position: number): Fence | undefined {
    const index = this.fenceAt[position] ?? NO_FENCE;
    return index === NO_FENCE ? undefined : this.fences[index];
  }

  /** The text that reopens a code block when a part starts at `start`. */
  private reopenAt(start: number): string {
    const fence = this.fence(start);
    return fence && start > fence.openEnd ? fence.reopen : '';
  }

  /** The fence a part ending at `cut` is inside of (and so must close), if any. */
  private fenceInside(cut: number): Fence | undefined {
    const fence = this.fence(cut);
    return fence && cut >= fence.openEnd && cut <= fence.closeStart ? fence : undefined;
  }

  private closeAt(cut: number): string {
    return this.fenceInside(cut)?.close ?? '';
  }

  private trimmedEnd(cut: number): number {
    return (this.lastNonSpace[cut] ?? -1) + 1;
  }

  private nonSpaceBetween(from: number, to: number): number {
    return to <= from ? 0 : (this.nonSpaceBefore[to] ?? 0) - (this.nonSpaceBefore[from] ?? 0);
  }

  /** Whether the part `[start, cut)` may end at `cut` under `rules`. */
  private acceptable(start: number, cut: number, rules: Rules): boolean {
    if (cut <= start || this.nonSpaceBetween(start, cut) === 0) return false;
    const fence = this.fence(cut);
    if (fence && rules !== 'any') {
      // Never inside a fence line itself.
      if (cut > fence.openStart && cut < fence.openEnd) return false;
      if (fence.closed && cut > fence.closeStart && cut < fence.closeEnd) return false;
    }
    const length = this.reopenAt(start).length + (this.trimmedEnd(cut) - start) + this.closeAt(cut).length;
    if (length > this.maxLength) return false;
    if (rules === 'strict') {
      // A cut inside a code block leaves code on both sides: no empty block on either side.
      const inside = this.fenceInside(cut);
      if (inside) {
        if (this.nonSpaceBetween(Math.max(start, inside.openEnd), cut) === 0) return false;
        if (this.nonSpaceBetween(cut, inside.closeStart) === 0) return false;
      }
    }
    return true;
  }

  private findCut(start: number): number {
    const windowEnd = Math.min(this.n, start + this.maxLength - this.reopenAt(start).length);
    for (const rank of ['paragraph', 'line', 'sentence', 'space'] as const) {
      const cut = this.lastBreak(start, windowEnd, rank, 'strict');
      if (cut !== undefined) return cut;
    }
    return (
      this.lastGraphemeCut(start, windowEnd, 'strict') ??
      this.lastBreak(start, windowEnd, 'line', 'relaxed') ??
      this.lastBreak(start, windowEnd, 'space', 'relaxed') ??
      this.lastGraphemeCut(start, windowEnd, 'relaxed') ??
      this.lastCodePointCut(start, windowEnd, 'relaxed') ??
      this.lastCodePointCut(start, windowEnd, 'any') ??
      // Unreachable with maxLength >= MIN_SPLIT_LENGTH; guarantees progress all the same.
      Math.min(this.n, start + 1)
    );
  }

  private lastBreak(start: number, windowEnd: number, rank: Rank, rules: Rules): number | undefined {
    for (let cut = Math.min(windowEnd, this.n - 1); cut > start; cut--) {
      if (this.isBreak(cut, rank) && this.acceptable(start, cut, rules)) return cut;
    }
    return undefined;
  }

  private isBreak(cut: number, rank: Rank): boolean {
    const { text } = this;
    switch (rank) {
      case 'paragraph':
        return text.charCodeAt(cut) === 10 && !this.fenceInside(cut) && this.blankLineFollows(cut);
      case 'line':
        return text.charCodeAt(cut) === 10;
      case 'sentence':
        return !this.fenceInside(cut) && this.endsSentence(cut);
      case 'space':
        return this.isSpace[cut] === 1;
    }
  }

  /** The line after the `\n` at `newline` holds only spaces and tabs. */
  private blankLineFollows(newline: number): boolean {
    for (let i = newline + 1; i < this.n; i++) {
      const code = this.text.charCodeAt(i);
      if (code === 10) return true;
      if (code !== 32 && code !== 9 && code !== 13) return false;
    }
    return false;
  }

  /** A sentence ends just before `cut`: `.`, `!`, `?` (and closing quotes) then whitespace, or CJK `。`. */
  private endsSentence(cut: number): boolean {
    const before = this.text.charAt(cut - 1);
    if (SENTENCE_END_NO_SPACE.has(before)) return true;
    if (this.isSpace[cut] !== 1) return false;
    let i = cut - 1;
    while (i > 0 && CLOSING_PUNCTUATION.has(this.text.charAt(i))) i--;
    return SENTENCE_END.has(this.text.charAt(i));
  }

  private lastGraphemeCut(start: number, windowEnd: number, rules: Rules): number | undefined {
    this.segmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
    // Look a little past the window so that its last cluster is seen whole.
    const sliceEnd = Math.min(this.n, windowEnd + 64);
    const boundaries: number[] = [];
    for (const { index } of this.segmenter.segment(this.text.slice(start, sliceEnd))) {
      boundaries.push(start + index);
    }
    if (sliceEnd === this.n) boundaries.push(this.n);
    for (let i = boundaries.length - 1; i >= 0; i--) {
      const cut = boundaries[i] ?? start;
      if (cut <= windowEnd && this.acceptable(start, cut, rules)) return cut;
    }
    return undefined;
  }

  private lastCodePointCut(start: number, windowEnd: number, rules: Rules): number | undefined {
    for (let cut = windowEnd; cut > start; cut--) {
      if (splitsSurrogatePair(this.text, cut)) continue;
      if (this.acceptable(start, cut, rules)) return cut;
    }
    return undefined;
  }
}

function splitsSurrogatePair(text: string, at: number): boolean {
  const before = text.charCodeAt(at - 1);
  const after = text.charCodeAt(at);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}

/**
 * The fenced code blocks of a Markdown text (CommonMark rules: up to three spaces of indentation,
 * three or more backticks or tildes, closed by a line of at least as many of the same character).
 * Blocks whose reopening and closing lines leave no room for code are left as plain text.
 */
function findFences(text: string, maxLength: number): Fence[] {
  const fences: Fence[] = [];
  let open: { openStart: number; openEnd: number; marker: string; line: string } | undefined;
  let lineStart = 0;
  while (lineStart <= text.length) {
    const newline = text.indexOf('\n', lineStart);
    const lineEnd = newline === -1 ? text.length : newline;
    const line = text.slice(lineStart, lineEnd).replace(/\r$/, '');
    if (open === undefined) {
      const match = OPENING_FENCE.exec(line);
      const marker = match?.[1];
      if (marker !== undefined && !(marker.startsWith('`') && (match?.[2] ?? '').includes('`'))) {
        open = { openStart: lineStart, openEnd: lineEnd, marker, line: line.trim() };
      }
    } else {
      const marker = CLOSING_FENCE.exec(line)?.[1];
      if (marker !== undefined && marker[0] === open.marker[0] && marker.length >= open.marker.length) {
        fences.push(makeFence(open, lineStart, lineEnd, true));
        open = undefined;
      }
    }
    if (newline === -1) break;
    lineStart = newline + 1;
  }
  if (open !== undefined) fences.push(makeFence(open, text.length, text.length, false));
  return fences.filter((f) => f.reopen.length + f.close.length + 4 <= maxLength);
}

function makeFence(
  open: { openStart: number; openEnd: number; marker: string; line: string },
  closeStart: number,
  closeEnd: number,
  closed: boolean,
): Fence {
  return {
    openStart: open.openStart,
    openEnd: open.openEnd,
    closeStart,
    closeEnd,
    closed,
    reopen: `${open.line}\n`,
    close: `\n${open.marker}`,
  };
}

/** `/\s/` by code unit, without a regex call per character for plain ASCII text. */
function isWhitespace(code: number): boolean {
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return /\s/.test(String.fromCharCode(code));
}
