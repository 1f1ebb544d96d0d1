/**
 * Property tests of the channel floor over random traffic (see `support/floorTraffic.ts`): several
 * avatars and humans, mentions by name and platform id, replies, summons, dismissals, avatars'
 * own messages, time jumps and late events, random failures and aborts, random configs.
 *
 * Each property plays a traffic in simulated time and checks an invariant over the whole effect
 * log (and over `view()` after every event).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FloorEffect, Rung, TurnClaim } from '../../src/floor/floorTypes.js';
import {
  FloorDriver,
  type LogEntry,
  playTraffic,
  type Recording,
  type Traffic,
  trafficArb,
} from '../support/floorTraffic.js';
import { fuzzRuns } from '../support/fuzzRuns.js';

const RUNGS: ReadonlySet<Rung> = new Set<Rung>([
  'reply',
  'thread',
  'summon',
  'affinity',
  'mention',
  'round-robin',
  'initiative',
  'greeting',
  'follow-up',
]);

const traffic = trafficArb({ maxSteps: 40 });

/** Runs per property: about 50 events per run, the whole file takes well under 20 s. */
const RUNS = fuzzRuns(120);

/** Seed for properties that are expected to fail (known bugs), so that they fail every time. */
const SEED = 20_251_113;

/** Plays a traffic, checking `perEvent` after every event; returns the recording. */
function play(t: Traffic, perEvent?: (entry: LogEntry, recording: () => Recording) => void): Recording {
  let rec: Recording | undefined;
  const driver = new FloorDriver(t, (entry) => perEvent?.(entry, () => rec as Recording));
  rec = driver.recording;
  return driver.finish();
}

function claimsOf(effects: readonly FloorEffect[]): TurnClaim[] {
  const out: TurnClaim[] = [];
  for (const e of effects) if (e.type === 'turn.claimed') out.push(e.turn);
  return out;
}

describe('channel floor invariants over random traffic', () => {
  it('never records more turns in a thread than its maxTurns', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        const maxTurns = new Map<string, number>();
        play(t, (entry, rec) => {
          for (const e of entry.effects) {
            if (e.type === 'thread.opened') maxTurns.set(e.threadId, e.maxTurns);
            if (e.type === 'thread.ended') {
              expect(maxTurns.has(e.threadId)).toBe(true);
              expect(e.turns).toBeLessThanOrEqual(maxTurns.get(e.threadId) as number);
            }
          }
          for (const th of rec().floor.view().threads) {
            expect(th.turnCount).toBeLessThanOrEqual(th.maxTurns);
            expect(th.maxTurns).toBe(maxTurns.get(th.id));
          }
        });
      }),
      { numRuns: RUNS },
    );
  });

  it('never lets an avatar answer its own message', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        const rec = playTraffic(t);
        for (const claim of rec.claims.values()) {
          if (claim.triggerMessageId === undefined) continue;
          const author = rec.authors.get(claim.triggerMessageId);
          expect(author, `trigger ${claim.triggerMessageId} has a known author`).toBeDefined();
          expect(claim.avatarId).not.toBe(author?.id);
          expect(claim.context.addressedById).not.toBe(claim.avatarId);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('says nothing in a thread once it has ended', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        const rec = playTraffic(t);
        const ended = new Set<string>();
        for (const e of rec.effects) {
          if (e.type === 'thread.ended') {
            expect(ended.has(e.threadId), `${e.threadId} ends once`).toBe(false);
            ended.add(e.threadId);
          }
          if (e.type === 'turn.consumed' && e.threadId !== undefined)
            expect(ended.has(e.threadId)).toBe(false);
          if (e.type === 'turn.claimed' && e.turn.threadId !== undefined)
            expect(ended.has(e.turn.threadId)).toBe(false);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('keeps delivered answers per human message within the main and cascade lanes (thread turns apart)', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        const rec = playTraffic(t);
        const { maxResponsesPerMessage, botCascadeLimit } = t.world.config;
        const perAnchor = new Map<string, { main: number; cascade: number }>();
        for (const e of rec.effects) {
          if (e.type !== 'turn.consumed') continue;
          const claim = rec.claims.get(e.turnId) as TurnClaim;
          if (claim.lane === 'scheduled' || claim.lane === 'thread') continue;
          const n = perAnchor.get(claim.anchorMessageId) ?? { main: 0, cascade: 0 };
          n[claim.lane]++;
          perAnchor.set(claim.anchorMessageId, n);
          expect(n.main, `main lane of ${claim.anchorMessageId}`).toBeLessThanOrEqual(maxResponsesPerMessage);
          expect(n.cascade, `cascade lane of ${claim.anchorMessageId}`).toBeLessThanOrEqual(botCascadeLimit);
        }
        // Main-lane turns answer the human message that anchors them; cascade ones answer avatars.
        for (const claim of rec.claims.values()) {
          if (claim.lane === 'main') expect(claim.triggerMessageId).toBe(claim.anchorMessageId);
          if (claim.lane === 'cascade' || claim.lane === 'thread')
            expect(rec.authors.get(claim.triggerMessageId as string)?.kind).toBe('avatar');
          // Thread-lane turns are turns inside a thread; the thread's limit bounds them.
          if (claim.lane === 'thread') expect(claim.threadId).toBeDefined();
          if (claim.lane === 'scheduled') expect(['greeting', 'follow-up']).toContain(claim.rung);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('never lets summon turns go negative, and keeps one claim per avatar and one follow-up pending per avatar', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        play(t, (_entry, rec) => {
          const view = rec().floor.view();
          for (const p of view.present) {
            expect(p.summonTurns).toBeGreaterThanOrEqual(0);
            expect(Number.isInteger(p.summonTurns)).toBe(true);
          }
          const inFlightAvatars = view.inFlight.map((c) => c.avatarId);
          expect(new Set(inFlightAvatars).size).toBe(inFlightAvatars.length);
          const followUps = view.pendingFollowUps.map((f) => f.avatarId);
          expect(new Set(followUps).size).toBe(followUps.length);
          expect(view.budget.main).toBeGreaterThanOrEqual(0);
          expect(view.budget.cascade).toBeGreaterThanOrEqual(0);
        });
      }),
      { numRuns: RUNS },
    );
  });

  it('gives every claim a rung and a reason, claims only present avatars and settles each turn once', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        const settled = new Set<string>();
        const claimed = new Set<string>();
        play(t, (entry) => {
          for (const e of entry.effects) {
            if (e.type === 'turn.claimed') {
              expect(RUNGS.has(e.turn.rung)).toBe(true);
              expect(e.turn.reason.trim()).not.toBe('');
              expect(claimed.has(e.turn.turnId)).toBe(false);
              claimed.add(e.turn.turnId);
              expect(e.turn.claimedAt).toBe(e.at);
            }
            if (e.type === 'turn.consumed' || e.type === 'turn.released') {
              expect(claimed.has(e.turnId)).toBe(true);
              expect(settled.has(e.turnId), `${e.turnId} settles once`).toBe(false);
              settled.add(e.turnId);
            }
            if (e.type === 'candidate.suppressed') expect(e.reason).not.toBe('');
            if (e.type === 'event.rejected') expect(e.code).toMatch(/^[A-Z_]+$/);
          }
          const present = new Set(entry.presentBefore);
          for (const e of entry.effects) {
            if (e.type === 'presence.summoned') present.add(e.avatarId);
            if (e.type === 'turn.claimed') expect(present.has(e.turn.avatarId)).toBe(true);
          }
        });
      }),
      { numRuns: RUNS },
    );
  });

  it('claims at most one follow-up per delivered greeting, and at most one second follow-up after it', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        const rec = playTraffic(t);
        const greetings = new Map<string, number>();
        const followUps = new Map<string, number>();
        const seconds = new Map<string, number>();
        for (const e of rec.effects) {
          if (e.type === 'turn.consumed' && e.rung === 'greeting') {
            greetings.set(e.avatarId, (greetings.get(e.avatarId) ?? 0) + 1);
          }
          if (e.type === 'turn.claimed' && e.turn.rung === 'follow-up') {
            expect(e.turn.kind).toBe('follow-up');
            if (e.turn.context.addressedById !== undefined) {
              // A second follow-up answers a person, after a first one.
              const n = (seconds.get(e.turn.avatarId) ?? 0) + 1;
              seconds.set(e.turn.avatarId, n);
              expect(n).toBeLessThanOrEqual(followUps.get(e.turn.avatarId) ?? 0);
              expect(t.world.config.summonSecondFollowUpMs).toBeGreaterThan(0);
              continue;
            }
            const n = (followUps.get(e.turn.avatarId) ?? 0) + 1;
            followUps.set(e.turn.avatarId, n);
            expect(n).toBeLessThanOrEqual(greetings.get(e.turn.avatarId) ?? 0);
          }
          if (e.type === 'turn.claimed' && e.turn.rung === 'greeting') expect(e.turn.kind).toBe('greeting');
        }
        if (!t.world.config.summonProactiveEnabled) expect(followUps.size).toBe(0);
      }),
      { numRuns: RUNS },
    );
  });

  it('answers an unaddressed message with at most one avatar and an addressed one only with avatars it addresses', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        play(t, (entry) => {
          const u = entry.utterance;
          if (!u || entry.effects.some((e) => e.type === 'event.rejected')) return;
          const present = new Set(entry.presentBefore);
          const addressed = new Set(u.addressedIds.filter((id) => id !== u.author.id && present.has(id)));
          const answers = claimsOf(entry.effects).filter((c) => c.triggerMessageId === u.messageId);
          if (addressed.size === 0) {
            expect(answers.length).toBeLessThanOrEqual(1);
          } else {
            for (const c of answers)
              expect(addressed.has(c.avatarId), `${c.avatarId} was addressed`).toBe(true);
            expect(answers.length).toBeLessThanOrEqual(addressed.size);
          }
          if (u.author.kind === 'human') {
            expect(answers.length).toBeLessThanOrEqual(t.world.config.maxResponsesPerMessage);
          }
        });
      }),
      { numRuns: RUNS },
    );
  });

  it('counts each delivered thread turn exactly once', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        const rec = playTraffic(t);
        const delivered = new Map<string, number>();
        const endedWith = new Map<string, number>();
        for (const e of rec.effects) {
          if (e.type === 'turn.consumed' && e.threadId !== undefined) {
            delivered.set(e.threadId, (delivered.get(e.threadId) ?? 0) + 1);
          }
          if (e.type === 'thread.ended') endedWith.set(e.threadId, e.turns);
        }
        for (const [id, turns] of endedWith) expect(turns, `turns of ${id}`).toBe(delivered.get(id) ?? 0);
        for (const th of rec.floor.view().threads)
          expect(th.turnCount, `turns of ${th.id}`).toBe(delivered.get(th.id) ?? 0);
      }),
      { numRuns: RUNS },
    );
  });

  it('forgets, when a thread ends, every ended thread no pending turn can name (but that one)', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        play(t, (entry, rec) => {
          if (!entry.effects.some((e) => e.type === 'thread.ended')) return;
          const snap = rec().floor.snapshot() as {
            endedThreads: [string, string][];
            inFlight: { threadId?: string }[];
            deferred: [string, { spec: { threadId?: string } }][];
            pendingGreetings: [string, { threadId?: string }][];
          };
          const named = new Set<string | undefined>([
            ...snap.inFlight.map((c) => c.threadId),
            ...snap.deferred.map(([, d]) => d.spec.threadId),
            ...snap.pendingGreetings.map(([, g]) => g.threadId),
          ]);
          const unnamed = snap.endedThreads.filter(([id]) => !named.has(id));
          expect(unnamed.length, JSON.stringify(snap.endedThreads)).toBeLessThanOrEqual(1);
        });
      }),
      // Found by a CI run: a thread named only by a turn that the same event settled after another
      // thread ended was kept (two ended threads remembered where one should be).
      { numRuns: RUNS, examples: [[SETTLED_LATER as unknown as Traffic]] },
    );
  });

  it('conserves the live budget: what is left plus what is claimed and not released equals the lane size', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        const released = new Set<string>();
        const { maxResponsesPerMessage, botCascadeLimit } = t.world.config;
        play(t, (entry, rec) => {
          for (const e of entry.effects) if (e.type === 'turn.released') released.add(e.turnId);
          const view = rec().floor.view();
          const anchor = view.budget.anchorMessageId;
          if (anchor === undefined) {
            expect(view.budget).toEqual({ main: 0, cascade: 0 });
            return;
          }
          let main = 0;
          let cascade = 0;
          for (const c of rec().claims.values()) {
            if (c.anchorMessageId !== anchor || released.has(c.turnId)) continue;
            if (c.lane === 'main') main++;
            if (c.lane === 'cascade') cascade++;
          }
          expect(view.budget.main + main, `main lane of ${anchor}`).toBe(maxResponsesPerMessage);
          expect(view.budget.cascade + cascade, `cascade lane of ${anchor}`).toBe(botCascadeLimit);
        });
      }),
      { numRuns: RUNS },
    );
  });

  it('spends a guaranteed turn only when a turn is delivered, one at a time; a summon’s expire with its conversation', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        play(t, (entry, rec) => {
          const before = new Map(entry.viewBefore.present.map((p) => [p.id, p]));
          for (const p of rec().floor.view().present) {
            const was = before.get(p.id);
            if (was === undefined || p.summonTurns >= was.summonTurns) continue;
            // The conversation mode ended by now: the summon's turns are gone (a mention in the same
            // event may grant new ones), ordinary rules apply.
            if (
              was.conversingUntil > 0 &&
              was.conversingUntil <= Math.max(entry.event.at, entry.viewBefore.now)
            )
              continue;
            const spent = entry.effects.filter(
              (e) => e.type === 'turn.consumed' && e.avatarId === p.id && e.rung !== 'greeting',
            );
            expect(
              spent.length,
              `${p.id} spent a turn (${was.summonTurns} -> ${p.summonTurns}, conversing ${was.conversing} -> ${p.conversing}, ${entry.event.type})`,
            ).toBe(1);
            expect(p.summonTurns).toBe(was.summonTurns - 1);
          }
          for (const e of entry.effects) {
            if (e.type !== 'presence.summoned') continue;
            expect(e.turnsGranted).toBe(t.world.config.summonInitialTurns);
            const now = rec()
              .floor.view()
              .present.find((p) => p.id === e.avatarId);
            expect(now?.summonTurns).toBeGreaterThanOrEqual(t.world.config.summonInitialTurns);
          }
        });
      }),
      { numRuns: RUNS },
    );
  });

  it('never lets a turn delivered after its thread ended open a thread or draw answers', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        const threadOf = new Map<string, string>();
        const ended = new Set<string>();
        play(t, (entry) => {
          const { event, effects } = entry;
          const thread = event.type === 'turn.delivered' ? threadOf.get(event.turnId) : undefined;
          if (event.type === 'turn.delivered' && thread !== undefined && ended.has(thread)) {
            expect(effects.filter((e) => e.type === 'thread.opened')).toEqual([]);
            // Nobody answers it (an answer the speaker owed someone else may follow, as after any turn).
            expect(
              effects.filter((e) => e.type === 'turn.claimed' && e.turn.triggerMessageId === event.messageId),
            ).toEqual([]);
          }
          for (const e of effects) {
            if (e.type === 'turn.claimed' && e.turn.threadId !== undefined)
              threadOf.set(e.turn.turnId, e.turn.threadId);
            if (e.type === 'thread.ended') ended.add(e.threadId);
          }
        });
      }),
      { numRuns: RUNS },
    );
  });

  it('never opens a thread between two avatars sooner than THREAD_BACKOFF_BASE after their last one ended', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        // The wait never exceeds the window.
        const base = Math.min(t.world.config.threadBackoffBaseMs, t.world.config.threadBackoffWindowMs);
        const lastEnded = new Map<string, number>();
        const participants = new Map<string, string[]>();
        const pairs = (ids: readonly string[]) =>
          ids.flatMap((a, i) => ids.slice(i + 1).map((b) => [a, b].sort().join('+')));
        play(t, (entry) => {
          for (const e of entry.effects) {
            if (e.type === 'thread.opened') {
              participants.set(e.threadId, e.participants);
              if (e.mode === 'summon') continue; // a person's act, not avatars' rapid threads
              for (const pair of pairs(e.participants)) {
                const ended = lastEnded.get(pair);
                if (ended !== undefined && base > 0)
                  expect(e.at - ended, `${pair} reopened`).toBeGreaterThanOrEqual(base);
              }
            }
            if (e.type === 'thread.ended')
              for (const pair of pairs(participants.get(e.threadId) ?? [])) lastEnded.set(pair, e.at);
          }
        });
      }),
      { numRuns: RUNS },
    );
  });

  it('is loop-free: every avatar-only chain ends, within the cascade lane and the turn limits of its threads', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        const cfg = t.world.config;
        const rec = playTraffic(t);
        // A chain: avatar turns each answering the one before, from a person's message (or an
        // avatar's own post) on. Outside threads each link spends the cascade lane; inside, the
        // thread's turn limit bounds it, and a thread ends without reopening itself, so a chain
        // passes through at most cascade + 1 threads.
        const longestThread = Math.max(cfg.threadMaxTurns, cfg.botMentionThreadTurns, cfg.summonThreadTurns);
        const bound =
          cfg.maxResponsesPerMessage + cfg.botCascadeLimit + (cfg.botCascadeLimit + 2) * longestThread;
        const turnOfMessage = new Map<string, string>();
        // Per turn: the chain it ends, counted since the last person spoke (a person's message
        // opens a new budget, so a chain is measured from it), and the lanes of its links.
        const chain = new Map<string, { anchor: string; lanes: string[] }>();
        for (const e of rec.effects) {
          if (e.type !== 'turn.consumed') continue;
          turnOfMessage.set(e.messageId, e.turnId);
          const claim = rec.claims.get(e.turnId) as TurnClaim;
          const before =
            claim.triggerMessageId !== undefined ? turnOfMessage.get(claim.triggerMessageId) : undefined;
          const previous = before !== undefined ? chain.get(before) : undefined;
          const lanes =
            previous && previous.anchor === claim.anchorMessageId
              ? [...previous.lanes, claim.lane]
              : [claim.lane];
          chain.set(e.turnId, { anchor: claim.anchorMessageId, lanes });
          expect(lanes.length, `chain ${lanes.join(' > ')}`).toBeLessThanOrEqual(bound);
          // Links outside threads never outnumber the cascade lane.
          expect(lanes.filter((l) => l === 'cascade').length).toBeLessThanOrEqual(cfg.botCascadeLimit);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('answers an avatar message at most min(BOT_MENTION_CASCADE_LIMIT, MAX_RESPONSES_PER_MESSAGE) times', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        const cfg = t.world.config;
        const cap = Math.min(cfg.botCascadeLimit, cfg.maxResponsesPerMessage);
        const answers = new Map<string, number>();
        play(t, (entry) => {
          for (const e of entry.effects) {
            const trigger = e.type === 'turn.claimed' ? e.turn.triggerMessageId : undefined;
            if (e.type !== 'turn.claimed' || e.turn.lane !== 'cascade' || trigger === undefined) continue;
            const n = (answers.get(trigger) ?? 0) + 1;
            answers.set(trigger, n);
            expect(
              n,
              `answers to ${e.turn.triggerMessageId} (${e.turn.avatarId} ${e.turn.rung} ${e.turn.reason}; event ${entry.event.type})`,
            ).toBeLessThanOrEqual(cap);
          }
        });
      }),
      { numRuns: RUNS },
    );
  });

  it('answers a person who has been talking to a ready avatar, whatever rung above it waits', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        // Affinity (the sticky rung) answers through cooldowns, so a ready avatar the author has
        // been talking to always lets an unaddressed message be answered by someone, even when
        // the same avatar's summon or thread rung is held back.
        let affinityBefore = new Map<string, Record<string, number>>();
        play(t, (entry, rec) => {
          const { event, effects } = entry;
          if (event.type === 'message' && event.author.kind === 'human' && event.replyTo === undefined) {
            const authorId = event.author.id;
            const addressedSomeone = effects.some(
              (e) => e.type === 'candidate.suppressed' && (e.reason === 'busy' || e.reason === 'not-present'),
            );
            // A late event is decided at the floor's time, which never goes back.
            const now = Math.max(event.at, entry.viewBefore.now);
            const sticky = entry.viewBefore.present.filter(
              (p) => p.turn === 'ready' && (affinityBefore.get(p.id)?.[authorId] ?? 0) > now,
            );
            if (sticky.length > 0 && !addressedSomeone && entry.presentBefore.length > 0) {
              const answered = effects.filter((e) => e.type === 'turn.claimed');
              expect(
                answered.length,
                `someone answers ${authorId} (sticky: ${sticky.map((p) => p.id)})`,
              ).toBeGreaterThan(0);
            }
          }
          affinityBefore = new Map(
            rec()
              .floor.snapshot()
              .presences.map(([id, p]) => [id, { ...p.affinity }]),
          );
        });
      }),
      { numRuns: RUNS },
    );
  });

  it('respects cooldowns on the ambient and summon rungs, and fires follow-ups no earlier than due', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        const cfg = t.world.config;
        const greetingDeliveredAt = new Map<string, number>();
        play(t, (entry, rec) => {
          const before = new Map(entry.viewBefore.present.map((p) => [p.id, p]));
          for (const e of entry.effects) {
            if (e.type === 'turn.consumed' && e.rung === 'greeting')
              greetingDeliveredAt.set(e.avatarId, e.at);
            if (e.type !== 'turn.claimed') continue;
            const claim = e.turn;
            const p = before.get(claim.avatarId);
            if (p && (claim.rung === 'round-robin' || claim.rung === 'initiative')) {
              expect(e.at, `${claim.avatarId} off cooldown for ${claim.rung}`).toBeGreaterThanOrEqual(
                p.cooldownUntil,
              );
            }
            if (p && claim.rung === 'summon') {
              expect(p.summonTurns).toBeGreaterThan(0);
              if (p.lastSpokeAt !== null)
                expect(e.at).toBeGreaterThanOrEqual(p.lastSpokeAt + cfg.recentSummonCooldownMs);
            }
            if (claim.rung === 'follow-up') {
              const greeted = greetingDeliveredAt.get(claim.avatarId);
              expect(greeted).toBeDefined();
              expect(e.at).toBeGreaterThanOrEqual((greeted as number) + cfg.summonFollowUpDelayMs);
            }
            if (claim.threadId !== undefined) {
              const th = rec()
                .floor.view()
                .threads.find((x) => x.id === claim.threadId);
              expect(th?.participants).toContain(claim.avatarId);
            }
          }
        });
      }),
      { numRuns: RUNS },
    );
  });

  // BUG (src/floor/channelFloor.ts resumeDeferred): an avatar addressed while busy gets its
  // answer claimed later with the rung decided back then, without the gate being applied again. A
  // deferred `thread` answer is claimed after its thread has ended or filled up (no threadId, the
  // reason still cites the thread), and ignores THREAD_OVERRIDE_COOLDOWN=false although the
  // avatar has just spoken. See the 'answers owed while busy' tests in channelFloor.test.ts.
  // Seeded so that this expected failure is deterministic.
  it('claims at the thread rung only inside an active thread, and only off cooldown when THREAD_OVERRIDE_COOLDOWN=false', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        play(t, (entry, rec) => {
          const after = new Map(
            rec()
              .floor.view()
              .present.map((p) => [p.id, p]),
          );
          for (const e of entry.effects) {
            if (e.type !== 'turn.claimed' || e.turn.rung !== 'thread') continue;
            expect(e.turn.threadId).toBeDefined();
            const p = after.get(e.turn.avatarId);
            if (p && !t.world.config.threadOverrideCooldown)
              expect(e.at).toBeGreaterThanOrEqual(p.cooldownUntil);
          }
        });
      }),
      { numRuns: 300, seed: SEED, endOnFailure: true },
    );
  });

  it('reports a thread end at a time no later than the event that noticed it', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        const openedAt = new Map<string, number>();
        play(t, (entry, rec) => {
          const now = rec().floor.view().now;
          for (const e of entry.effects) {
            expect(e.at).toBeLessThanOrEqual(now);
            if (e.type === 'thread.opened') {
              openedAt.set(e.threadId, e.at);
              expect(e.expiresAt).toBeGreaterThan(e.at);
            }
            if (e.type === 'thread.ended')
              expect(e.at).toBeGreaterThanOrEqual(openedAt.get(e.threadId) as number);
          }
        });
      }),
      { numRuns: fuzzRuns(100) },
    );
  });

  it('is deterministic: the same traffic on a fresh floor gives identical effects', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        const first = playTraffic(t);
        const second = playTraffic(t);
        expect(second.effects).toEqual(first.effects);
        expect(second.floor.view()).toEqual(first.floor.view());
      }),
      { numRuns: fuzzRuns(60) },
    );
  });

  it('decides identically whether presences and threads are compiled or real xstate snapshots', () => {
    fc.assert(
      fc.property(traffic, (t) => {
        const compiled = playTraffic(t, undefined, 'compiled');
        const xstate = playTraffic(t, undefined, 'xstate');
        expect(compiled.effects).toEqual(xstate.effects);
        expect(compiled.floor.view()).toEqual(xstate.floor.view());
      }),
      { numRuns: fuzzRuns(60) },
    );
  });

  it('does not leak state between floors: two floors stepped in turn match their solo runs', () => {
    fc.assert(
      fc.property(traffic, traffic, (t1, t2) => {
        const solo1 = playTraffic(t1);
        const solo2 = playTraffic(t2);
        const d1 = new FloorDriver(t1);
        const d2 = new FloorDriver(t2);
        while (d1.hasSteps || d2.hasSteps) {
          d1.step();
          d2.step();
        }
        expect(d1.finish().effects).toEqual(solo1.effects);
        expect(d2.finish().effects).toEqual(solo2.effects);
      }),
      { numRuns: fuzzRuns(30) },
    );
  });
});

/** The traffic of a CI counterexample (see the test that names it). */
const SETTLED_LATER = {
  world: {
    config: {
      threadTtlMs: 5000,
      threadMaxTurns: 1,
      threadExtendOnActivity: false,
      threadActivityExtension: 1000,
      threadBackoffBaseMs: 0,
      threadBackoffWindowMs: 10000,
      threadQuietMs: 1000,
      summonProactiveEnabled: false,
      summonFollowUpDelayMs: 0,
      summonSecondFollowUpMs: 0,
      summonInitialTurns: 0,
      summonConversationDurationMs: 10000,
      summonThreadTurns: 1,
      botCascadeLimit: 0,
      botMentionCreateThread: false,
      botMentionThreadTurns: 1,
      mentionGrantTurns: 0,
      threadResponsePriority: 'high',
      threadOverrideCooldown: false,
      perAvatarCooldownMs: 0,
      recentSummonCooldownMs: 0,
      stickyAffinityTtlMs: 0,
      maxResponsesPerMessage: 1,
      attentionHalfLifeMs: 1000,
      activeSpeakerWindowMs: 1000,
      initiativeThreshold: 0,
      greetingMaxChars: 150,
    },
    residents: [2, 5],
  },
  steps: [
    {
      kind: 'human',
      dt: 0,
      human: 0,
      msg: { words: [{ w: 'farewell', text: 'goodbye' }], platformMentions: [] },
    },
    { kind: 'summon', dt: 0, avatar: 0, human: 0, withMessageId: false },
    { kind: 'summon', dt: 0, avatar: 1, human: 0, withMessageId: false },
    { kind: 'summon', dt: 3647, avatar: 3, human: 0, withMessageId: false },
    {
      kind: 'human',
      dt: -1,
      human: 0,
      msg: { words: [{ w: 'name', avatar: 0, style: 'as-is' }], platformMentions: [] },
    },
    { kind: 'human', dt: 0, human: 0, msg: { words: [{ w: 'plain', text: 'hello' }], platformMentions: [] } },
    {
      kind: 'human',
      dt: 0,
      human: 0,
      msg: {
        words: [
          { w: 'name', avatar: 1, style: 'as-is' },
          { w: 'plain', text: 'hello' },
        ],
        platformMentions: [],
      },
    },
    {
      kind: 'human',
      dt: 2964,
      human: 0,
      msg: { words: [{ w: 'name', avatar: 0, style: 'as-is' }], platformMentions: [] },
    },
    {
      kind: 'human',
      dt: 0,
      human: 0,
      msg: { words: [{ w: 'name', avatar: 0, style: 'as-is' }], platformMentions: [] },
    },
    { kind: 'human', dt: 0, human: 0, msg: { words: [{ w: 'plain', text: 'hello' }], platformMentions: [] } },
  ],
  turns: [
    {
      latency: 0,
      generated: false,
      outcome: 'deliver',
      msg: { words: [{ w: 'plain', text: 'hello' }], platformMentions: [] },
    },
    {
      latency: 8000,
      generated: false,
      outcome: 'deliver',
      msg: { words: [{ w: 'name', avatar: 0, style: 'as-is' }], platformMentions: [] },
    },
    {
      latency: 3648,
      generated: false,
      outcome: 'fail',
      msg: { words: [{ w: 'plain', text: 'hello' }], platformMentions: [] },
    },
    {
      latency: 0,
      generated: false,
      outcome: 'deliver',
      msg: { words: [{ w: 'name', avatar: 0, style: 'as-is' }], platformMentions: [] },
    },
  ],
};
