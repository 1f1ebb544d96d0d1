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
  const old = profileLines(before);
  const updated = profileLines(after);
  const headings = new Set(updated.filter((l) => l.heading).map((l) => l.text));
  const lost = old.filter((l) => l.heading && !headings.has(l.text));
  if (lost.length > 0)
    return `dropped or renamed the heading${lost.length > 1 ? 's' : ''} ${lost.map((l) => `“${sectionName(l.text)}”`).join(', ')}`;
  const sectionOf = new Map<string, string>();
  for (const line of old)
    if (!line.heading && !sectionOf.has(line.text)) sectionOf.set(line.text, line.section);
  const moves = new Map<string, number>();
  for (const line of updated) {
    const was = line.heading ? undefined : sectionOf.get(line.text);
    if (was === undefined || was === line.section) continue;
    const move = `from ${sectionName(was)} to ${sectionName(line.section)}`;
    moves.set(move, (moves.get(move) ?? 0) + 1);
  }
  if (moves.size > 0)
    return `moved ${[...moves].map(([move, n]) => `${n} line${n > 1 ? 's' : ''} ${move}`).join(', ')}`;
  if (compaction) return undefined;
  const dropped = droppedShare(before, after);
  if (dropped > MAX_DROPPED_SHARE) return `dropped ${Math.round(dropped * 100)}% of the lines`;
  return undefined;
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
