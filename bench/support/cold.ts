/**
 * The cost of a roster the process has never seen: what a floor pays for its mention matcher when
 * it is created (or re-activated) with that roster, and on its first text scans.
 *
 * Until 4c14f3e the matcher compiled one Unicode-aware RegExp per roster, which V8 compiled to
 * bytecode on the first scan and to native code on the second; this figure was that compile spike.
 * The matcher now scans words with one process-wide pattern and looks them up in per-roster maps,
 * so a new roster costs building those maps (in the floor's constructor, outside the benchmark's
 * timed windows); the first scans are measured as before, so the figures stay comparable.
 */

import type { AvatarProfile } from '../../src/floor/floorTypes.js';
import { createMentionMatcher, type MentionMatcher } from '../../src/textRules/mentionMatcher.js';
import { settledHeap } from './heap.js';
import { castRoster } from './traffic.js';

export interface ColdMatcher {
  avatars: number;
  rosters: number;
  /** Median ms to build a fresh roster's matcher (`createMentionMatcher`), over the rosters. */
  buildMs: number;
  /** Median ms of the first, second and third `find` on it. */
  firstMs: number;
  secondMs: number;
  thirdMs: number;
  /** Retained heap per matcher after those scans. */
  bytes: number;
}

const TEXTS = [
  'good morning everyone, anyone here into jazz?',
  'I asked Luna about chess yesterday, still curious',
];

/** Medians, so that a scavenge landing in one sample does not move the figure. */
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length === 0
    ? Number.NaN
    : s.length % 2
      ? (s[mid] as number)
      : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

export function measureColdMatchers(
  pool: readonly AvatarProfile[],
  avatars: number,
  rosters: number,
  seed: number,
  tag: string,
): ColdMatcher {
  const casts = Array.from({ length: rosters }, (_, i) =>
    castRoster(`cold:${tag}:${avatars}:${i}`, pool, avatars, seed),
  );
  const before = settledHeap();
  const matchers: MentionMatcher[] = [];
  const build: number[] = [];
  const first: number[] = [];
  const second: number[] = [];
  const third: number[] = [];
  casts.forEach((roster, i) => {
    const text = TEXTS[i % TEXTS.length] as string;
    const t0 = performance.now();
    const m = createMentionMatcher(roster);
    const t1 = performance.now();
    m.find(text);
    const t2 = performance.now();
    m.find(text);
    const t3 = performance.now();
    m.find(text);
    const t4 = performance.now();
    build.push(t1 - t0);
    first.push(t2 - t1);
    second.push(t3 - t2);
    third.push(t4 - t3);
    matchers.push(m);
  });
  const bytes = (settledHeap() - before) / rosters;
  if (matchers.length < 0) throw new Error('unreachable'); // keeps the matchers alive up to here
  return {
    avatars,
    rosters,
    buildMs: median(build),
    firstMs: median(first),
    secondMs: median(second),
    thirdMs: median(third),
    bytes,
  };
}
