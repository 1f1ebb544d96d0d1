import { droppedShare } from './droppedShare.js';

/**
 * A preference profile's structure: a heading (any line that is not a list item) opens a section,
 * and each `- ` line under it belongs to it. Lines before the first heading belong to none.
 */
export interface ProfileLine {
  /** The line trimmed. */
  text: string;
  /** The heading of its section (trimmed), `''` before the first one; a heading's own, itself. */
  section: string;
  heading: boolean;
}

const LIST_ITEM = /^[-*•]\s+/u;

/** The non-empty lines of a profile with their sections. */
export function profileLines(profile: string): ProfileLine[] {
  const lines: ProfileLine[] = [];
  let section = '';
  for (const raw of profile.split('\n')) {
    const text = raw.trim();
    if (text === '') continue;
    const heading = !LIST_ITEM.test(text);
    if (heading) section = text;
    lines.push({ text, section, heading });
  }
  return lines;
}

/** A heading as a person names it: the words before its colon (`Ignore`), or its start. */
export function sectionName(heading: string): string {
  if (heading === '') return 'the top';
  const name = heading.split(':')[0]?.trim() ?? heading;
  return name.length > 40 ? `${name.slice(0, 39)}…` : name;
}

/** The most of a profile's lines an update may drop: more is a rewrite (or a poisoned one). */
export const MAX_DROPPED_SHARE = 0.25;

/**
 * Why a model's update of `before` into `after` is refused, or `undefined` when it is a targeted
 * update: it drops or renames a heading, moves (or copies) a line from one section to another, or
 * (unless `compaction`, which may drop learned lines) drops more than a quarter of the lines.
 */
export function refusalOf(before: string, after: string, { compaction = false } = {}): string | undefined {
  const headings = headingsOf(before);
  const lost = headings.filter((heading) => !holdsLine(after, heading.text));
  if (lost.length > 0)
    return `dropped or renamed the heading${lost.length > 1 ? 's' : ''} ${lost.map((h) => `“${sectionName(h.text)}”`).join(', ')}`;
  // The usual update adds lines at the end: nothing dropped, only those lines to look up.
  if (appendedOnly(before, after)) return movedByAppending(before, after, headings);
  const moved = movedLines(before, after);
  if (moved) return moved;
  if (compaction) return undefined;
  const dropped = droppedShare(before, after);
  if (dropped > MAX_DROPPED_SHARE) return `dropped ${Math.round(dropped * 100)}% of the lines`;
  return undefined;
}

/** A heading of a profile, trimmed, and where its line starts. */
interface Heading {
  text: string;
  at: number;
}

/**
 * A heading line: after a line break (or at the start), optional white space, then a first
 * character that does not open a list item (`- `, `* `, `• `). `\s` is the white space `trim()`
 * cuts; only `\n` ends a line, as the profile is read elsewhere (so no `m` flag: it would also
 * start lines after `\r` and U+2028).
 */
const HEADING_LINE = /(?:^|\n)[^\S\n]*(?![-*•][^\S\n])(\S[^\n]*)/gu;

/** The headings of a profile in order, found by one native search rather than line by line. */
function headingsOf(profile: string): Heading[] {
  const headings: Heading[] = [];
  for (const match of profile.matchAll(HEADING_LINE)) {
    const at = match.index + (profile.charCodeAt(match.index) === 10 ? 1 : 0);
    headings.push({ text: (match[1] as string).trim(), at });
  }
  return headings;
}

/** The heading of the section that holds position `at` (`''` before the first). */
function sectionAt(headings: readonly Heading[], at: number): string {
  let section = '';
  for (const heading of headings) {
    if (heading.at > at) break;
    section = heading.text;
  }
  return section;
}

/** Whether some line of `text`, trimmed, is `line` (itself trimmed and non-empty). */
function holdsLine(text: string, line: string): boolean {
  return !lineStarts(text, line).next().done;
}

/** Whether `after` is `before` with lines added at its end (the usual update). */
function appendedOnly(before: string, after: string): boolean {
  // A slice compared whole: startsWith goes character by character (25 µs for 2,000 characters).
  return (
    after.slice(0, before.length) === before &&
    (after.length === before.length || after.charCodeAt(before.length) === 10)
  );
}

/**
 * The moves of an update that only added lines at the end: an added line that was in the profile
 * already, but under none of its copies' headings where it now is (a copy into another section).
 * A few searches instead of reading every line of both.
 */
function movedByAppending(before: string, after: string, headings: readonly Heading[]): string | undefined {
  let section = headings[headings.length - 1]?.text ?? '';
  const moves = new Map<string, number>();
  for (const raw of after.slice(before.length + 1).split('\n')) {
    const text = raw.trim();
    if (text === '') continue;
    if (!LIST_ITEM.test(text)) {
      section = text;
      continue;
    }
    let from: string | undefined;
    for (const at of lineStarts(before, text)) {
      const was = sectionAt(headings, at);
      if (was === section) {
        from = undefined;
        break;
      }
      from ??= was;
    }
    if (from === undefined) continue;
    const move = `from ${sectionName(from)} to ${sectionName(section)}`;
    moves.set(move, (moves.get(move) ?? 0) + 1);
  }
  return describeMoves(moves);
}

/** Where the lines of `text` that are `line` (trimmed) are. */
function* lineStarts(text: string, line: string): Generator<number> {
  for (let at = text.indexOf(line); at !== -1; at = text.indexOf(line, at + 1)) {
    const start = text.lastIndexOf('\n', at - 1) + 1;
    let end = text.indexOf('\n', at + line.length);
    if (end === -1) end = text.length;
    if (text.slice(start, at).trim() === '' && text.slice(at + line.length, end).trim() === '') yield at;
  }
}

function describeMoves(moves: ReadonlyMap<string, number>): string | undefined {
  if (moves.size === 0) return undefined;
  return `moved ${[...moves].map(([move, n]) => `${n} line${n > 1 ? 's' : ''} ${move}`).join(', ')}`;
}

/**
 * Lines of `before` found in `after` under none of the sections they were in, counted by where
 * they went (from the first section that held them).
 */
function movedLines(before: string, after: string): string | undefined {
  const sectionsOf = new Map<string, string[]>();
  for (const line of profileLines(before)) {
    if (line.heading) continue;
    const sections = sectionsOf.get(line.text);
    if (sections) sections.push(line.section);
    else sectionsOf.set(line.text, [line.section]);
  }
  const moves = new Map<string, number>();
  for (const line of profileLines(after)) {
    const was = line.heading ? undefined : sectionsOf.get(line.text);
    if (was === undefined || was.includes(line.section)) continue;
    const move = `from ${sectionName(was[0] as string)} to ${sectionName(line.section)}`;
    moves.set(move, (moves.get(move) ?? 0) + 1);
  }
  return describeMoves(moves);
}

/** What {@link compactByRule} did. */
export interface Compaction {
  text: string;
  /** Duplicate lines merged into one. */
  merged: number;
  /** Learned lines dropped, oldest first. */
  dropped: number;
  /** Whether the profile was still too long and was cut at a line. */
  cut: boolean;
}

/**
 * A profile brought to at most `max` characters by rule: duplicate lines of a section merged, then
 * the oldest learned lines (those not in `defaults`) dropped, one at a time from the section that
 * has the most of them; headings are kept. Only if that is not enough is the rest cut at a line.
 */
export function compactByRule(profile: string, max: number, defaults = ''): Compaction {
  const kept = new Set(profileLines(defaults).map((l) => l.text));
  const raw = profile.split('\n');
  const gone = new Set<number>();
  let length = profile.length;
  const drop = (i: number) => {
    gone.add(i);
    length -= (raw[i] as string).length + 1;
  };
  // Duplicates within a section (same words, any case or spacing): the first is kept.
  const seen = new Set<string>();
  const learned = new Map<string, number[]>();
  let section = '';
  for (const [i, line] of raw.entries()) {
    const text = line.trim();
    if (text === '') continue;
    if (!LIST_ITEM.test(text)) {
      section = text;
      continue;
    }
    const key = `${section}\n${text.replace(/\s+/gu, ' ').toLowerCase()}`;
    if (seen.has(key)) {
      drop(i);
      continue;
    }
    seen.add(key);
    if (kept.has(text)) continue;
    const lines = learned.get(section) ?? [];
    lines.push(i);
    learned.set(section, lines);
  }
  const merged = gone.size;
  const queues = [...learned.values()];
  while (length > max) {
    let longest: number[] | undefined;
    for (const queue of queues)
      if (queue.length > 0 && (!longest || queue.length > longest.length)) longest = queue;
    if (!longest) break;
    drop(longest.shift() as number);
  }
  const dropped = gone.size - merged;
  let text = raw.filter((_, i) => !gone.has(i)).join('\n');
  const cut = text.length > max;
  if (cut) {
    const end = text.lastIndexOf('\n', max);
    text = text.slice(0, end > 0 ? end : max);
  }
  return { text, merged, dropped, cut };
}

/** What {@link compactByRule} did, in words. */
export function describeCompaction(c: Compaction, before: number): string {
  const parts = [
    c.merged > 0 ? `merged ${c.merged} duplicate line${c.merged > 1 ? 's' : ''}` : undefined,
    c.dropped > 0 ? `dropped the ${c.dropped} oldest learned line${c.dropped > 1 ? 's' : ''}` : undefined,
    c.cut ? 'cut the rest at a line' : undefined,
  ].filter((p) => p !== undefined);
  return `${parts.join(', ') || 'nothing to drop'} (${before.toLocaleString('en')} → ${c.text.length.toLocaleString('en')} characters)`;
}

/**
 * `after` with each list line it added under a heading `section` matches (a line `before` did not
 * have) passed through `change`. The usual update only appends: then only the appended part is read.
 */
export function mapAddedLines(
  before: string,
  after: string,
  section: RegExp,
  change: (line: string) => string,
): string {
  const appended = appendedOnly(before, after);
  const head = appended ? before : '';
  const rest = appended ? after.slice(before.length) : after;
  const old = appended ? undefined : new Set(profileLines(before).map((l) => l.text));
  let inSection = appended ? section.test(lastHeading(before)) : false;
  const lines = rest.split('\n').map((raw) => {
    const text = raw.trim();
    if (text === '') return raw;
    if (!LIST_ITEM.test(text)) {
      inSection = section.test(text);
      return raw;
    }
    return inSection && !old?.has(text) ? change(raw) : raw;
  });
  return head + lines.join('\n');
}

/** The last heading of a profile (`''` when it has none). */
function lastHeading(profile: string): string {
  return headingsOf(profile).at(-1)?.text ?? '';
}
