/**
 * Line deltas between two texts, for keeping old versions of a value as the difference from the
 * next one (as RCS does): a preference profile that learns one line at a time keeps each old
 * version in a few dozen bytes instead of a whole copy.
 *
 * Texts are cut into pieces after each newline, real or JSON-escaped (`\n`), and the older text is
 * written as pieces copied from the newer one plus literal text. Applying a delta to the text it
 * was made against gives the older text back exactly, whatever the texts are; the cutting only
 * decides how much is shared.
 */

/**
 * A delta, flat: a run of pieces of the newer text is two numbers in a row (the first piece and
 * how many), a run of its characters two numbers of which the first is negative (minus one less
 * than the first character, and how many), literal text is a string. Flat, an old version keeps
 * one small array, not one per run.
 */
export type Delta = (number | string)[];

/** Every this many places a piece may appear in the newer text, the search stops looking further. */
const MAX_CANDIDATES = 8;

/** The text cut after each newline, real or JSON-escaped. */
function piecesOf(text: string): string[] {
  const pieces: string[] = [];
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // '\n' (a newline) or a backslash followed by 'n' (a JSON-escaped one).
    if (c === 10 || (c === 92 && text.charCodeAt(i + 1) === 110 && ++i)) {
      pieces.push(text.slice(from, i + 1));
      from = i + 1;
    }
  }
  if (from < text.length) pieces.push(text.slice(from));
  return pieces;
}

/** The delta that turns `newer` into `older`. */
export function deltaBetween(newer: string, older: string): Delta {
  return blockDelta(newer, older) ?? pieceDelta(newer, older);
}

/** Newlines (real or JSON-escaped) a block may leave out at the start and at the end of the older text. */
const BLOCK_HEAD_CUTS = 8;
const BLOCK_TAIL_CUTS = 2;

/**
 * The usual change of a profile keeps most of it in one block, with a few lines gone at the start
 * (a size cap) and some changed or added at the end: the older text as literal head, that block
 * found in the newer one, literal tail. Found with a few searches, without cutting the texts up.
 */
function blockDelta(newer: string, older: string): Delta | undefined {
  const tails = cutsFromEnd(older, BLOCK_TAIL_CUTS);
  let from = 0;
  for (let head = 0; head <= BLOCK_HEAD_CUTS && from < older.length; head++) {
    for (const to of tails) {
      // Worth it only when the block is most of the older text.
      if ((to - from) * 2 < older.length) continue;
      const at = newer.indexOf(older.slice(from, to));
      if (at === -1) continue;
      const ops: Delta = [];
      if (from > 0) ops.push(older.slice(0, from));
      ops.push(-at - 1, to - from);
      if (to < older.length) ops.push(older.slice(to));
      return ops;
    }
    from = nextCut(older, from);
    if (from === -1) break;
  }
  return undefined;
}

/** Where the piece after `from` starts (after the next newline, real or JSON-escaped), or -1. */
function nextCut(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) return i + 1;
    if (c === 92 && text.charCodeAt(i + 1) === 110) return i + 2;
  }
  return -1;
}

/** The end of the text, and where its last `count` pieces start, latest first. */
function cutsFromEnd(text: string, count: number): number[] {
  const cuts = [text.length];
  for (let i = text.length - 1; i > 0 && cuts.length <= count; i--) {
    const c = text.charCodeAt(i - 1);
    const cut = c === 10 || (c === 110 && text.charCodeAt(i - 2) === 92);
    if (cut && i < (cuts.at(-1) as number)) cuts.push(i);
  }
  return cuts;
}

/** The delta as pieces of the newer text found in the older one, literal text elsewhere. */
function pieceDelta(newer: string, older: string): Delta {
  const source = piecesOf(newer);
  const target = piecesOf(older);
  // A profile usually changes in one place: the pieces shared at the start and at the end are
  // taken as they are, and only those in between are searched for.
  const most = Math.min(source.length, target.length);
  let head = 0;
  while (head < most && source[head] === target[head]) head++;
  let tail = 0;
  while (tail < most - head && source[source.length - 1 - tail] === target[target.length - 1 - tail]) tail++;
  const ops: Delta = head > 0 ? [0, head] : [];
  const end = target.length - tail;
  if (head < end) searchPieces(source, target, head, end, ops);
  if (tail > 0) ops.push(source.length - tail, tail);
  return ops;
}

/** Adds to `ops` the pieces `target[from..to)` as runs of `source` where found, literal text elsewhere. */
function searchPieces(source: string[], target: string[], from: number, to: number, ops: Delta): void {
  // Pieces as numbers, so runs compare cheaply.
  const ids = new Map<string, number>();
  const idOf = (piece: string) => {
    let id = ids.get(piece);
    if (id === undefined) {
      id = ids.size;
      ids.set(piece, id);
    }
    return id;
  };
  const src = source.map(idOf);
  const tgt = target.map(idOf);
  const where = new Map<number, number[]>();
  for (const [i, id] of src.entries()) {
    const at = where.get(id);
    if (!at) where.set(id, [i]);
    else if (at.length < MAX_CANDIDATES) at.push(i);
  }
  let literal = '';
  for (let i = from; i < to; ) {
    let best = 0;
    let bestStart = 0;
    for (const start of where.get(tgt[i] as number) ?? []) {
      let length = 0;
      while (start + length < src.length && i + length < to && src[start + length] === tgt[i + length])
        length++;
      if (length > best) {
        best = length;
        bestStart = start;
        if (i + length === to) break;
      }
    }
    if (best === 0) {
      literal += target[i];
      i++;
      continue;
    }
    if (literal !== '') {
      ops.push(literal);
      literal = '';
    }
    ops.push(bestStart, best);
    i += best;
  }
  if (literal !== '') ops.push(literal);
}

/** The older text back from the newer one and their delta. */
export function applyDelta(newer: string, ops: Readonly<Delta>): string {
  let source: string[] | undefined;
  let out = '';
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i] as number | string;
    if (typeof op === 'string') out += op;
    else {
      const count = ops[++i] as number;
      if (op < 0) out += newer.slice(-op - 1, -op - 1 + count);
      else {
        source ??= piecesOf(newer);
        out += source.slice(op, op + count).join('');
      }
    }
  }
  return out;
}

/** Roughly what a delta costs to keep, in characters (to decide whether it beats a copy). */
export function deltaSize(ops: Readonly<Delta>): number {
  let size = 16;
  for (const op of ops) size += typeof op === 'string' ? op.length + 20 : 4;
  return size;
}
