/** Percentiles, summaries and table formatting for the coordination benchmark. */
import { COLD, EVENT_KINDS, type EventKind, type RunStats, samples } from './driver.js';

export interface Latency {
  count: number;
  /** Microseconds. */
  p50: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

/** Percentiles (nearest rank) of latencies given in ms, reported in µs. */
export function latencyOf(samples: Float64Array): Latency {
  const n = samples.length;
  if (n === 0)
    return {
      count: 0,
      p50: Number.NaN,
      p99: Number.NaN,
      p999: Number.NaN,
      max: Number.NaN,
      mean: Number.NaN,
    };
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number) => (sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))] as number) * 1000;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i] as number;
  return {
    count: n,
    p50: at(0.5),
    p99: at(0.99),
    p999: at(0.999),
    max: (sorted[n - 1] as number) * 1000,
    mean: (sum / n) * 1000,
  };
}

/** Latencies of the samples a predicate on the kind code accepts. */
function latencyWhere(stats: RunStats, accept: (code: number) => boolean): Latency {
  const { latencies, kinds } = samples(stats);
  let n = 0;
  for (let i = 0; i < kinds.length; i++) if (accept(kinds[i] as number)) n++;
  const out = new Float64Array(n);
  let j = 0;
  for (let i = 0; i < kinds.length; i++) if (accept(kinds[i] as number)) out[j++] = latencies[i] as number;
  return latencyOf(out);
}

export interface RunSummary {
  /** Channels run (all batches). */
  channels: number;
  /** Time inside floor calls, ms: all of it, and without each floor's first two text scans. */
  floorMs: number;
  steadyFloorMs: number;
  events: number;
  messages: number;
  humanMessages: number;
  deliveredTurns: number;
  /** Per second of time spent inside floor calls (handle + nextDeadline). */
  eventsPerSec: number;
  messagesPerSec: number;
  /** Per second of the whole driver loop (floor + driver bookkeeping), for context. */
  messagesPerSecWall: number;
  /** Floor time per message, µs (all events' cost divided by messages). */
  usPerMessage: number;
  /**
   * The same without each floor's first two text scans (where V8 compiles the floor's mention
   * regex): the steady-state cost of a decision once a floor has been used.
   */
  steady: { messagesPerSec: number; eventsPerSec: number; usPerMessage: number; latency: Latency };
  /** Each floor's first two text scans: how many, and their handle time per floor in ms. */
  cold: { events: number; msPerFloor: number; latency: Latency };
  /** CPU time over wall time of the loop (1.0 = one core busy). */
  cpuPerWall: number;
  latency: Latency;
  latencyByKind: Partial<Record<EventKind, Latency>>;
  /** Share of handle time spent on each event kind. */
  timeShareByKind: Partial<Record<EventKind, number>>;
  byKind: Record<EventKind, number>;
  claims: number;
  claimsByRung: RunStats['claimsByRung'];
  suppressed: number;
  threadsOpened: number;
  threadsEnded: number;
  rejected: Record<string, number>;
  staleDeadlines: number;
  simulatedHours: number;
}

export function summarize(stats: RunStats): RunSummary {
  const byKind: Partial<Record<EventKind, Latency>> = {};
  EVENT_KINDS.forEach((k, code) => {
    if (stats.byKind[k] > 0) byKind[k] = latencyWhere(stats, (c) => (c & ~COLD) === code);
  });
  const share: Partial<Record<EventKind, number>> = {};
  const { latencies, kinds } = samples(stats);
  for (let i = 0; i < kinds.length; i++) {
    const k = EVENT_KINDS[(kinds[i] as number) & ~COLD] as EventKind;
    share[k] = (share[k] ?? 0) + (latencies[i] as number) / stats.handleMs;
  }
  const steadyMs = stats.floorMs - stats.coldMs;
  const steadyMessages = stats.messages - stats.coldEvents;
  return {
    channels: stats.channels,
    floorMs: stats.floorMs,
    steadyFloorMs: steadyMs,
    events: stats.events,
    messages: stats.messages,
    humanMessages: stats.humanMessages,
    deliveredTurns: stats.delivered,
    eventsPerSec: stats.events / (stats.floorMs / 1000),
    messagesPerSec: stats.messages / (stats.floorMs / 1000),
    messagesPerSecWall: stats.messages / (stats.wallMs / 1000),
    usPerMessage: (stats.floorMs * 1000) / stats.messages,
    steady: {
      messagesPerSec: steadyMessages / (steadyMs / 1000),
      eventsPerSec: (stats.events - stats.coldEvents) / (steadyMs / 1000),
      usPerMessage: (steadyMs * 1000) / steadyMessages,
      latency: latencyWhere(stats, (c) => (c & COLD) === 0),
    },
    cold: {
      events: stats.coldEvents,
      msPerFloor: stats.coldMs / stats.channels,
      latency: latencyWhere(stats, (c) => (c & COLD) !== 0),
    },
    cpuPerWall: stats.cpuMs / stats.wallMs,
    latency: latencyOf(samples(stats).latencies),
    latencyByKind: byKind,
    timeShareByKind: share,
    byKind: stats.byKind,
    claims: stats.claims,
    claimsByRung: stats.claimsByRung,
    suppressed: stats.suppressed,
    threadsOpened: stats.threadsOpened,
    threadsEnded: stats.threadsEnded,
    rejected: stats.rejected,
    staleDeadlines: stats.staleDeadlines,
    simulatedHours: stats.simulatedMs / 3_600_000,
  };
}

export interface Agreement {
  triggers: number;
  same: number;
  rate: number;
  /** Triggers only one side decided on (it claimed or recorded something the other never saw). */
  onlyA: number;
  onlyB: number;
  examples: { trigger: string; a: string | null; b: string | null }[];
  /** Channels compared, and how many of them got the very same effect stream from both. */
  channels: number;
  identicalStreams: number;
}

const norm = (v: string) => (v === '' ? '(none)' : v.split(',').sort().join(','));
/** The channel a trigger key or stream key belongs to (keys start with `<channelId>:`). */
const channelOf = (key: string) => {
  const i = key.indexOf(':');
  return i < 0 ? key : key.slice(0, i);
};

/**
 * Share of triggers (messages, summons, scheduled turns) for which two floors claimed the same
 * (avatar, rung) set, over the channels both ran (`streams` keys), and how many of those channels
 * got identical effect streams.
 */
export function agreement(
  a: { decisions?: Map<string, string> | undefined; streams?: Map<string, number> | undefined },
  b: { decisions?: Map<string, string> | undefined; streams?: Map<string, number> | undefined },
  maxExamples = 5,
): Agreement {
  const aStreams = a.streams ?? new Map<string, number>();
  const bStreams = b.streams ?? new Map<string, number>();
  const both = (key: string) => {
    const c = channelOf(key);
    return aStreams.has(c) && bStreams.has(c);
  };
  let triggers = 0;
  let same = 0;
  let onlyA = 0;
  let onlyB = 0;
  const examples: Agreement['examples'] = [];
  const aDecisions = a.decisions ?? new Map<string, string>();
  const bDecisions = b.decisions ?? new Map<string, string>();
  for (const [key, fa] of aDecisions) {
    if (!both(key)) continue;
    triggers++;
    const fb = bDecisions.get(key);
    if (fb === undefined) onlyA++;
    else if (norm(fa) === norm(fb)) {
      same++;
      continue;
    }
    if (examples.length < maxExamples)
      examples.push({ trigger: key, a: norm(fa), b: fb === undefined ? null : norm(fb) });
  }
  for (const [key, fb] of bDecisions) {
    if (!both(key) || aDecisions.has(key)) continue;
    triggers++;
    onlyB++;
    if (examples.length < maxExamples) examples.push({ trigger: key, a: null, b: norm(fb) });
  }
  let channels = 0;
  let identicalStreams = 0;
  for (const [c, h] of aStreams) {
    const hb = bStreams.get(c);
    if (hb === undefined) continue;
    channels++;
    if (hb === h) identicalStreams++;
  }
  return {
    triggers,
    same,
    rate: triggers === 0 ? 1 : same / triggers,
    onlyA,
    onlyB,
    examples,
    channels,
    identicalStreams,
  };
}

// ---------------------------------------------------------------- formatting

export const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
export const fixed = (n: number, digits = 1) =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a';
export const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}x` : 'n/a');
export const pct = (n: number, digits = 2) => (Number.isFinite(n) ? `${(n * 100).toFixed(digits)}%` : 'n/a');

/** A fixed-width table: first column left-aligned, the others right-aligned. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
