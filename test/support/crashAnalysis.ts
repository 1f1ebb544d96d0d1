/**
 * Reads what a crash-test run left behind (the child's journals, `final.json` and the SQLite
 * file) and checks the crash invariants. Every check is a statement about the files, whatever
 * the timing was: each failed one is returned as a sentence, with the numbers that broke it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../../src/adapters/store/sqlite/sqliteStore.js';
import type { StoredPresence } from '../../src/floor/floorSnapshotSchema.js';
import type { FloorEffect, Rung } from '../../src/floor/floorTypes.js';
import { restoredPresence } from '../../src/floor/storedMachines.js';
import { guaranteedTurns } from '../../src/machines/avatarPresence.machine.js';
import type { TroupeStore } from '../../src/ports/store.js';
import {
  type AttemptLine,
  CRASH_CHANNELS,
  CRASH_CONFIG,
  CRASH_FILES,
  type CrashMarker,
  crashChannelKey,
  type DeliveryLine,
  type EffectLine,
  type EventLine,
  type FinalFile,
  parseJsonLines,
  type RunLine,
  residentsOf,
} from './crashScenario.js';
import { readCrashChannel } from './crashState.js';

/**
 * How late (wall time) a thread may end after its deadline, or after the run that ended it started.
 * Floor time is checked exactly elsewhere (an expired thread ends at its deadline); this bound only
 * catches a wake-up that never fired (the thread would then end at the final run's quiet wait, tens
 * of seconds on), so it is a hang guard: on a machine with more busy processes than cores a timer
 * fires over a second late, and that is not a fault of the runtime.
 */
export const THREAD_END_TOLERANCE_MS = 5_000;

/** Rungs whose delivery spends a guaranteed summon turn (avatarPresence.machine.ts, SPENDS_SUMMON_TURN). */
const SPENDS_SUMMON_TURN: ReadonlySet<Rung> = new Set<Rung>(['summon', 'follow-up']);

type Effect<T extends FloorEffect['type']> = Extract<FloorEffect, { type: T }>;
type EffectEntry = Extract<EffectLine, { kind: 'effect' }>;

/** What a run of one seed left, and what checking it found. */
export interface CrashReport {
  violations: string[];
  stats: {
    runs: number;
    /** Script events acknowledged when each later run started (the first: at the kill). */
    cursors: number[];
    events: number;
    deliveries: number;
    responses: number;
    /** Send attempts the platform recognised as duplicates (resends after a restart). */
    resends: number;
    /** Unsettled outbox entries found by each restarted run. */
    unsettledAtRestart: number[];
    /** Turns in flight in the stored state each restarted run started from. */
    inFlightAtRestart: number[];
    /** Turns in flight at a restart with nothing in the outbox: generated again. */
    regenerated: number;
    /** Effects logged before the kill that the stored state did not have (lost with memory). */
    lostEffects: number;
    threads: number;
    /** Threads that ended in a later run than the one that opened them. */
    threadsAcrossRestart: number;
    /** Latest a thread ended after its deadline or its run's start, in wall time (ms). */
    maxThreadLatenessMs: number;
    summons: number;
    summonTurnsSpent: number;
  };
}

function readLines<T>(dir: string, name: keyof typeof CRASH_FILES): T[] {
  const path = join(dir, CRASH_FILES[name]);
  return existsSync(path) ? parseJsonLines<T>(readFileSync(path, 'utf8')) : [];
}

/** `crash:lobby:<epoch>:crash:lobby:t7` → its channel key, floor epoch and turn id. */
function parseResponseKey(key: string): { channelKey: string; epoch: string; turnId: string } | undefined {
  const [, channelKey, epoch, turnId] = /^(\w+:\w+):([^:]+):(\w+:\w+:t\d+)$/.exec(key) ?? [];
  if (!channelKey || !epoch || !turnId?.startsWith(`${channelKey}:`)) return undefined;
  return { channelKey, epoch, turnId };
}

function count<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** Checks every crash invariant against the files in `dir`. */
export async function analyseCrashRun(dir: string): Promise<CrashReport> {
  const violations: string[] = [];
  const fail = (message: string) => violations.push(message);

  const runs = readLines<RunLine>(dir, 'runs');
  const effectLines = readLines<EffectLine>(dir, 'effects');
  const deliveries = readLines<DeliveryLine>(dir, 'deliveries');
  const attempts = readLines<AttemptLine>(dir, 'attempts');
  const events = readLines<EventLine>(dir, 'events');
  const errors = readLines<{ run: number; code: string; message: string }>(dir, 'errors');
  const finalPath = join(dir, CRASH_FILES.final);
  const final = existsSync(finalPath)
    ? (JSON.parse(readFileSync(finalPath, 'utf8')) as FinalFile)
    : undefined;
  const lastRun = runs.length - 1;

  runs.forEach((r, i) => {
    if (r.run !== i) fail(`runs.jsonl line ${i} says run ${r.run}`);
  });
  if (!final) fail('final.json is missing: the finishing run did not complete');
  else if (final.run !== lastRun)
    fail(`final.json was written by run ${final.run}, the last run is ${lastRun}`);
  else if (!final.idle)
    fail(`the finishing run gave up after ${final.waitedMs} ms waiting for every channel to go quiet`);
  for (const e of errors) fail(`run ${e.run} reported ${e.code}: ${e.message}`);
  const log = readLines<{ level: number; run: number; msg: string }>(dir, 'log');
  for (const l of log) if (l.level >= 40) fail(`run ${l.run} logged "${l.msg}" at level ${l.level}`);

  // ------------------------------------------------------------ the store opens cleanly
  const dbPath = join(dir, CRASH_FILES.db);
  const db = new Database(dbPath, { readonly: true });
  let outboxRows: { key: string; sentParts: { index: number; messageId: string }[]; settled: unknown }[];
  const finalMarkers = new Map<string, { marker: CrashMarker | undefined; floor: StoredFloor | undefined }>();
  try {
    const integrity = db.pragma('integrity_check', { simple: true });
    if (integrity !== 'ok') fail(`PRAGMA integrity_check says ${String(integrity)}`);
    outboxRows = (
      db
        .prepare(
          `SELECT o.key, o.sent_parts, s.settled, s.last_part
            FROM outbox o LEFT JOIN outbox_settled s ON s.id = o.id ORDER BY o.id`,
        )
        .all() as {
        key: string;
        sent_parts: string;
        settled: string | null;
        last_part: string | null;
      }[]
    ).map((r) => ({
      key: r.key,
      sentParts: withLastPart(JSON.parse(r.sent_parts), r.last_part),
      settled: r.settled === null ? null : JSON.parse(r.settled),
    }));
  } finally {
    db.close();
  }
  try {
    const store = await openSqliteStore({ path: dbPath });
    // The stored state of each channel as a restarted runtime would restore it.
    for (const channel of CRASH_CHANNELS) {
      const state = await readCrashChannel(store.documents, crashChannelKey(channel));
      if (state) finalMarkers.set(crashChannelKey(channel), { marker: state.marker, floor: state.snapshot });
    }
    const unsettled = await store.outbox.unsettled();
    if (unsettled.length > 0)
      fail(`outbox has ${unsettled.length} unsettled entries: ${unsettled.map((e) => e.key).join(', ')}`);
    await checkHistory(store, outboxRows, fail);
    await store.close();
  } catch (error) {
    fail(`openSqliteStore failed: ${error instanceof Error ? error.message : String(error)}`);
  }

  // ------------------------------------------------------------ which effects survived
  const effectsOf = new Map<string, EffectEntry[]>(); // `${run}\0${channelKey}` → effects in order
  for (const line of effectLines) {
    if (line.kind !== 'effect') continue;
    const k = `${line.run}\u0000${line.channelKey}`;
    const list = effectsOf.get(k) ?? [];
    list.push(line);
    effectsOf.set(k, list);
  }
  const upTo = (run: number, channelKey: string, seq: number) =>
    (effectsOf.get(`${run}\u0000${channelKey}`) ?? []).filter((e) => e.seq <= seq);
  /** The effects the state a run started from reflects: a chain of stored documents back to a fresh floor. */
  const memo = new Map<string, EffectEntry[]>();
  const historyAtStart = (run: number, channelKey: string): EffectEntry[] => {
    const k = `${run}\u0000${channelKey}`;
    const known = memo.get(k);
    if (known) return known;
    const restored = runs[run]?.restored.find((r) => r.channelKey === channelKey);
    let history: EffectEntry[] = [];
    if (restored) {
      const marker = restored.marker;
      if (!marker) fail(`run ${run} found ${channelKey} stored without a marker`);
      else if (marker.run >= run) fail(`run ${run} found ${channelKey} stored by a later run ${marker.run}`);
      else history = [...historyAtStart(marker.run, channelKey), ...upTo(marker.run, channelKey, marker.seq)];
    }
    memo.set(k, history);
    return history;
  };

  const stats: CrashReport['stats'] = {
    runs: runs.length,
    cursors: runs.slice(1).map((r) => r.cursor),
    events: events.length,
    deliveries: deliveries.length,
    responses: 0,
    resends: attempts.filter((a) => a.result === 'duplicate').length,
    unsettledAtRestart: runs.slice(1).map((r) => r.unsettled.length),
    inFlightAtRestart: runs.slice(1).map((r) => r.restored.reduce((n, c) => n + c.inFlight.length, 0)),
    lostEffects: 0,
    threads: 0,
    threadsAcrossRestart: 0,
    maxThreadLatenessMs: 0,
    regenerated: log.filter((l) => l.msg.startsWith('resuming a turn that was in flight')).length,
    summons: 0,
    summonTurnsSpent: 0,
  };

  /** Every channel's surviving history: what the final stored state reflects. */
  const survived = new Map<string, EffectEntry[]>();
  for (const channel of CRASH_CHANNELS) {
    const channelKey = crashChannelKey(channel);
    const stored = finalMarkers.get(channelKey);
    const ownEffects = effectsOf.get(`${lastRun}\u0000${channelKey}`) ?? [];
    let history: EffectEntry[] = [];
    if (stored) {
      const marker = stored.marker;
      if (!marker) fail(`${channelKey} is stored without a marker at the end`);
      else {
        history = [...historyAtStart(marker.run, channelKey), ...upTo(marker.run, channelKey, marker.seq)];
        const lastOwn = ownEffects.at(-1);
        if (lastOwn && (marker.run !== lastRun || marker.seq < lastOwn.seq))
          fail(
            `${channelKey}: the final stored state (run ${marker.run}, effect ${marker.seq}) misses effects of the finishing run ${lastRun} (up to ${lastOwn.seq})`,
          );
      }
    } else if (ownEffects.length > 0) fail(`${channelKey} had effects but is not stored at the end`);
    survived.set(channelKey, history);
  }
  const survivedSet = new Set([...survived.values()].flat());
  stats.lostEffects = effectLines.filter(
    (l) => l.kind === 'effect' && l.run < lastRun && !survivedSet.has(l),
  ).length;

  // ------------------------------------------------------------ deliveries: exactly once
  const deliveredByKey = new Map<string, DeliveryLine>();
  const responses = new Map<string, DeliveryLine[]>(); // response key → parts
  for (const d of deliveries) {
    if (deliveredByKey.has(d.key)) fail(`part ${d.key} was delivered twice`);
    deliveredByKey.set(d.key, d);
    const hashAt = d.key.lastIndexOf('#');
    const responseKey = d.key.slice(0, hashAt);
    const parts = responses.get(responseKey) ?? [];
    parts.push(d);
    responses.set(responseKey, parts);
  }
  stats.responses = responses.size;
  for (const a of attempts) {
    if (a.result !== 'duplicate') continue;
    const original = deliveredByKey.get(a.key);
    if (!original) fail(`run ${a.run} resent ${a.key}, which was never delivered`);
    else if (original.text !== a.text)
      fail(`run ${a.run} resent ${a.key} with other text: "${a.text}" (delivered: "${original.text}")`);
  }
  const outboxByKey = new Map(outboxRows.map((r) => [r.key, r]));
  for (const row of outboxRows) {
    const settled = row.settled as { sent?: boolean } | null;
    if (!settled) continue; // reported above as unsettled
    if (settled.sent !== true) fail(`outbox entry ${row.key} settled as not sent`);
    if (!responses.has(row.key) || row.sentParts.length === 0)
      fail(`outbox entry ${row.key} is settled as sent, but the platform took none of it`);
    for (const part of row.sentParts) {
      const delivered = deliveredByKey.get(`${row.key}#${part.index}`);
      if (!delivered)
        fail(`outbox entry ${row.key} says part ${part.index} went out; the platform never took it`);
      else if (delivered.messageId !== part.messageId)
        fail(
          `outbox entry ${row.key} part ${part.index}: message id ${part.messageId}, platform ${delivered.messageId}`,
        );
    }
  }
  const epochs = new Map<string, Set<string>>();
  const deliveredTurns = new Map<string, { responseKey: string; first: DeliveryLine }>(); // `${channelKey}\0${turnId}`
  const answers = new Map<string, string[]>(); // `${avatar} → ${replyTo}` → response keys
  for (const [responseKey, parts] of responses) {
    const parsed = parseResponseKey(responseKey);
    if (!parsed) {
      fail(`delivered key ${responseKey} is not a turn's response key`);
      continue;
    }
    const indexes = parts.map((p) => Number(p.key.slice(p.key.lastIndexOf('#') + 1))).sort((a, b) => a - b);
    if (indexes.some((n, i) => n !== i))
      fail(`response ${responseKey} went out as parts ${indexes.join(',')}`);
    const row = outboxByKey.get(responseKey);
    if (!row) fail(`response ${responseKey} was delivered without an outbox record`);
    else if (row.sentParts.length !== parts.length)
      fail(
        `response ${responseKey}: ${parts.length} parts delivered, the outbox noted ${row.sentParts.length}`,
      );
    const set = epochs.get(parsed.channelKey) ?? new Set<string>();
    set.add(parsed.epoch);
    epochs.set(parsed.channelKey, set);
    const first = parts.find((p) => p.key.endsWith('#0'));
    if (first) {
      deliveredTurns.set(`${parsed.channelKey}\u0000${parsed.turnId}`, { responseKey, first });
      if (first.replyTo !== undefined) {
        const k = `${first.speaker} → ${first.replyTo}`;
        answers.set(k, [...(answers.get(k) ?? []), responseKey]);
      }
    }
  }
  for (const [k, keys] of answers)
    if (keys.length > 1) fail(`${k} was answered ${keys.length} times: ${keys.join(', ')}`);
  for (const [channelKey, set] of epochs) {
    const storedEpoch = finalMarkers.get(channelKey)?.floor?.epoch;
    if (set.size > 1)
      fail(`${channelKey} delivered responses of ${set.size} floor lifetimes: ${[...set].join(', ')}`);
    else if (storedEpoch !== undefined && !set.has(storedEpoch))
      fail(
        `${channelKey} delivered responses of floor ${[...set].join()}, but the stored floor is ${storedEpoch}`,
      );
  }

  // ------------------------------------------------------------ per channel: turns, summon turns, threads
  for (const channel of CRASH_CHANNELS) {
    const channelKey = crashChannelKey(channel);
    const history = survived.get(channelKey) ?? [];
    const claimed = new Map<string, Effect<'turn.claimed'>>();
    const consumed = new Map<string, number>();
    const released = new Map<string, Effect<'turn.released'>[]>();
    const presences = new Map<string, number>(residentsOf(channelKey).map((id) => [id, 0]));
    // When each avatar's summon conversation ends: its guaranteed turns go with it (seed 003).
    const conversingUntil = new Map<string, number>();
    const held = (id: string, at: number) =>
      at >= (conversingUntil.get(id) ?? 0) && conversingUntil.has(id) ? 0 : (presences.get(id) ?? 0);
    const opened = new Map<string, { effect: Effect<'thread.opened'>; run: number; deadline: number }>();
    const ended = new Map<string, { effect: Effect<'thread.ended'>; line: EffectEntry }[]>();

    for (const line of history) {
      const e = line.effect;
      switch (e.type) {
        case 'turn.claimed':
          if (claimed.has(e.turn.turnId)) fail(`${e.turn.turnId} was claimed twice`);
          claimed.set(e.turn.turnId, e);
          break;
        case 'turn.consumed': {
          count(consumed, e.turnId);
          if (presences.has(e.avatarId)) {
            // While the summon conversation is live every turn but the greeting spends one.
            const turns = held(e.avatarId, e.at);
            const conversing = e.at < (conversingUntil.get(e.avatarId) ?? 0);
            const spends =
              turns > 0 && (SPENDS_SUMMON_TURN.has(e.rung) || (conversing && e.rung !== 'greeting'));
            presences.set(e.avatarId, spends ? turns - 1 : turns);
            if (spends) stats.summonTurnsSpent += 1;
          }
          if (e.threadId !== undefined) {
            const thread = opened.get(e.threadId);
            if (thread) {
              // Activity pushes the deadline out to now + the extension: a share of the thread's TTL
              // (half unless CRASH_CONFIG says otherwise) or a fixed duration.
              const ttl = thread.effect.expiresAt - thread.effect.at;
              const extension = CRASH_CONFIG.threadActivityExtension ?? '50%';
              const extendBy =
                typeof extension === 'number'
                  ? extension
                  : Math.round((ttl * Number.parseFloat(extension)) / 100);
              thread.deadline = Math.max(thread.deadline, e.at + extendBy);
            }
          }
          const delivered = deliveredTurns.get(`${channelKey}\u0000${e.turnId}`);
          if (!delivered) fail(`${e.turnId} (${e.avatarId}, ${e.rung}) was consumed but never delivered`);
          else if (delivered.first.messageId !== e.messageId)
            fail(
              `${e.turnId} was consumed as message ${e.messageId}, delivered as ${delivered.first.messageId}`,
            );
          break;
        }
        case 'turn.released':
          released.set(e.turnId, [...(released.get(e.turnId) ?? []), e]);
          break;
        case 'presence.summoned':
          stats.summons += 1;
          presences.set(e.avatarId, Math.max(held(e.avatarId, e.at), e.turnsGranted));
          conversingUntil.set(
            e.avatarId,
            Math.max(
              conversingUntil.get(e.avatarId) ?? 0,
              e.at + (CRASH_CONFIG.summonConversationDurationMs ?? 0),
            ),
          );
          break;
        case 'presence.dismissed':
          presences.delete(e.avatarId);
          break;
        case 'thread.opened':
          if (opened.has(e.threadId)) fail(`${e.threadId} was opened twice`);
          opened.set(e.threadId, { effect: e, run: line.run, deadline: e.expiresAt });
          break;
        case 'thread.ended':
          ended.set(e.threadId, [...(ended.get(e.threadId) ?? []), { effect: e, line }]);
          break;
        default:
          break;
      }
    }

    // Every turn claimed is settled once: delivered and consumed, or released (and then, if the
    // platform took it anyway, only because the avatar was dismissed while it was being sent).
    for (const [turnId, claim] of claimed) {
      const n = consumed.get(turnId) ?? 0;
      const r = released.get(turnId) ?? [];
      const delivered = deliveredTurns.get(`${channelKey}\u0000${turnId}`);
      if (n > 1) fail(`${turnId} (${claim.turn.avatarId}, ${claim.turn.rung}) was consumed ${n} times`);
      if (n + r.length !== 1)
        fail(
          `${turnId} (${claim.turn.avatarId}) settled ${n + r.length} times (${n} consumed, ${r.length} released)`,
        );
      if (delivered && n === 0 && !r.some((x) => x.reason.startsWith('dismissed')))
        fail(
          `${turnId} (${claim.turn.avatarId}, ${claim.turn.rung}) was delivered but its turn was not consumed`,
        );
      if (delivered && delivered.first.speaker !== claim.turn.avatarId)
        fail(`${turnId} was claimed by ${claim.turn.avatarId} but delivered as ${delivered.first.speaker}`);
    }
    for (const turnId of consumed.keys())
      if (!claimed.has(turnId)) fail(`${turnId} was consumed without a claim in the stored history`);
    for (const [k, { responseKey }] of deliveredTurns) {
      const [ch, turnId] = k.split('\u0000');
      if (ch === channelKey && turnId !== undefined && !claimed.has(turnId))
        fail(`${responseKey} was delivered for a turn the stored floor never claimed`);
    }

    // Summon turns: what the presences hold at the end is what the surviving summons granted minus
    // what delivered summon and follow-up turns spent.
    const finalChannel = final?.channels.find((c) => c.channelKey === channelKey);
    if (final && !finalChannel) fail(`final.json has no ${channelKey}`);
    if (finalChannel) {
      const expected = [...presences].map(([id]) => `${id}=${held(id, finalChannel.now)}`).sort();
      const actual = finalChannel.present.map((p) => `${p.id}=${p.summonTurns}`).sort();
      if (expected.join(' ') !== actual.join(' '))
        fail(
          `${channelKey} summon turns: expected ${expected.join(' ')} from the effects, final state has ${actual.join(' ')}`,
        );
      if (finalChannel.inFlight.length > 0)
        fail(`${channelKey} still has turns in flight: ${finalChannel.inFlight}`);
      if (finalChannel.pendingFollowUps > 0) fail(`${channelKey} still has a follow-up pending`);
      for (const t of finalChannel.threads) fail(`${channelKey} still has thread ${t.id} (${t.status})`);
    }
    const storedFloor = finalMarkers.get(channelKey)?.floor;
    if (storedFloor) {
      const stored = storedFloor.presences
        .map(([id, st]) => {
          const { context } = restoredPresence(st, id, channelKey, CRASH_PRESENCE_SETTINGS);
          return `${id}=${guaranteedTurns(context, storedFloor.now)}`;
        })
        .sort()
        .join(' ');
      const viewed = (finalChannel?.present ?? [])
        .map((p) => `${p.id}=${p.summonTurns}`)
        .sort()
        .join(' ');
      if (finalChannel && stored !== viewed)
        fail(`${channelKey}: stored presences ${stored} differ from the final view ${viewed}`);
      if (storedFloor.threads.length > 0 || storedFloor.inFlight.length > 0)
        fail(`${channelKey} is stored with threads or turns in flight`);
    }

    // Threads: each one opened ends exactly once, no later than its last deadline; one that
    // expired ends exactly at it, even when that moment passed while the process was down.
    for (const [threadId, thread] of opened) {
      stats.threads += 1;
      const ends = ended.get(threadId) ?? [];
      const end = ends[0];
      if (ends.length !== 1 || !end) {
        fail(`${threadId} (opened in run ${thread.run}) ended ${ends.length} times`);
        continue;
      }
      if (end.line.run !== thread.run) stats.threadsAcrossRestart += 1;
      const { effect } = end;
      if (effect.at > thread.deadline)
        fail(`${threadId} ended at ${effect.at}, after its deadline ${thread.deadline} (${effect.outcome})`);
      if (effect.at < thread.effect.at) fail(`${threadId} ended at ${effect.at}, before it opened`);
      if (effect.outcome === 'expired' && effect.at !== thread.deadline)
        fail(`${threadId} expired at ${effect.at}, not at its deadline ${thread.deadline}`);
      const startedAt = runs[end.line.run]?.startedAt ?? 0;
      const lateness = end.line.wall - Math.max(effect.at, startedAt);
      stats.maxThreadLatenessMs = Math.max(stats.maxThreadLatenessMs, lateness);
      if (lateness > THREAD_END_TOLERANCE_MS)
        fail(
          `${threadId} ended ${lateness} ms late in wall time (deadline ${effect.at}, run ${end.line.run} started ${startedAt})`,
        );
    }
    for (const threadId of ended.keys())
      if (!opened.has(threadId)) fail(`${threadId} ended without being opened in the stored history`);
  }

  return { violations, stats };
}

/** Timing settings for reading a stored presence back: guaranteed turns do not depend on them. */
const CRASH_PRESENCE_SETTINGS = {
  perAvatarCooldownMs: 0,
  recentSummonCooldownMs: 0,
  stickyAffinityTtlMs: 0,
  attentionHalfLifeMs: 0,
  summonConversationDurationMs: 0,
};

/** The parts of a stored floor the analysis reads. */
interface StoredFloor {
  epoch: string;
  now: number;
  presences: [string, StoredPresence][];
  threads: unknown[];
  inFlight: unknown[];
}

/** The parts an entry's row noted, with the part its settlement added (as the store reads them). */
/**
 * The history prompts read: every reply the outbox says was sent has its line, once; no message
 * has two lines (a restart that applied a delivery again must not write it again).
 */
async function checkHistory(
  store: TroupeStore,
  outboxRows: { key: string; sentParts: { index: number; messageId: string }[]; settled: unknown }[],
  fail: (message: string) => void,
): Promise<void> {
  for (const channel of CRASH_CHANNELS) {
    const channelKey = crashChannelKey(channel);
    const lines = await store.history.recent(channelKey, 10_000);
    const seen = new Map<string, number>();
    for (const line of lines) count(seen, line.messageId);
    for (const [messageId, n] of seen)
      if (n > 1) fail(`${channelKey}: history holds message ${messageId} ${n} times`);
    for (const row of outboxRows) {
      if (!row.key.startsWith(`${channelKey}:`)) continue;
      const settled = row.settled as { sent?: boolean } | null;
      const first = row.sentParts.find((p) => p.index === 0) ?? row.sentParts[0];
      if (settled?.sent && first && !seen.has(first.messageId))
        fail(
          `${channelKey}: reply ${row.key} was sent (message ${first.messageId}) but history has no line for it`,
        );
    }
  }
}

function withLastPart(
  parts: { index: number; messageId: string }[],
  lastPart: string | null,
): { index: number; messageId: string }[] {
  if (lastPart === null) return parts;
  const last = JSON.parse(lastPart) as { index: number; messageId: string };
  return parts.some((p) => p.index === last.index) ? parts : [...parts, last];
}
