/**
 * How much of a profile an update dropped: the share of the profile's non-empty lines (trimmed)
 * that no line of the update holds. A memory update is refused past a share (the model rewrote
 * the profile instead of updating it), so this runs on every update the model makes.
 *
 * The usual update keeps the profile whole or drops its oldest lines (a size cap) and adds or
 * changes a line: every line but the first few is then one block of whole lines of the update,
 * found with one search, and only those few are looked up. Anything else is counted line by line.
 */
export function droppedShare(before: string, after: string): number {
  let from = 0;
  for (let head = 0; head <= QUICK_HEAD_LINES; head++) {
    const block = before.slice(from);
    if (block !== '' && holdsWholeLines(after, block)) return sharedHead(before, from, after, block);
    const newline = before.indexOf('\n', from);
    if (newline === -1) break;
    from = newline + 1;
  }
  return droppedShareByLines(before, after);
}

/** How many of a profile's first lines the quick check lets go before counting line by line. */
const QUICK_HEAD_LINES = 8;

/** Whether `block` appears in `text` starting at a line's start and ending at a line's end. */
function holdsWholeLines(text: string, block: string): boolean {
  for (let at = text.indexOf(block); at !== -1; at = text.indexOf(block, at + 1)) {
    const end = at + block.length;
    if ((at === 0 || text.charCodeAt(at - 1) === 10) && (end === text.length || text.charCodeAt(end) === 10))
      return true;
  }
  return false;
}

/** The share dropped when `before` from `from` on is kept whole: only its first lines can be gone. */
function sharedHead(before: string, from: number, after: string, block: string): number {
  let lines = nonEmptyLines(block);
  let dropped = 0;
  for (const raw of before.slice(0, from).split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    lines++;
    if (!holdsTrimmedLine(after, line)) dropped++;
  }
  return lines === 0 ? 0 : dropped / lines;
}

/** Whether some line of `text`, trimmed, is `line` (non-empty, itself trimmed). */
function holdsTrimmedLine(text: string, line: string): boolean {
  for (let at = text.indexOf(line); at !== -1; at = text.indexOf(line, at + 1)) {
    const start = text.lastIndexOf('\n', at - 1) + 1;
    let end = text.indexOf('\n', at + line.length);
    if (end === -1) end = text.length;
    if (text.slice(start, at).trim() === '' && text.slice(at + line.length, end).trim() === '') return true;
  }
  return false;
}

/** Lines of `text` (cut at each newline) holding more than white space. */
function nonEmptyLines(text: string): number {
  return text.match(NON_EMPTY_LINE)?.length ?? 0;
}

/** A line holding more than white space, whole (one match per such line). */
const NON_EMPTY_LINE = /[^\n]*\S[^\n]*/gu;

/** The share, counted line by line: every line of `before` looked up among those of `after`. */
export function droppedShareByLines(before: string, after: string): number {
  const kept = new Set<string>();
  for (const line of after.split('\n')) kept.add(line.trim());
  let lines = 0;
  let dropped = 0;
  for (const raw of before.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    lines++;
    if (!kept.has(line)) dropped++;
  }
  return lines === 0 ? 0 : dropped / lines;
}
