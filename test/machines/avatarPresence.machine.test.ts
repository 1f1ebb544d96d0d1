import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import { createMachineStepper } from '../../src/engine/machineStepper.js';
import type { Rung } from '../../src/floor/floorTypes.js';
import { attentionAt } from '../../src/machines/attention.js';
import {
  type AvatarPresenceEvent,
  type AvatarPresenceInput,
  avatarPresenceMachine,
  guaranteedTurns,
  hasAffinity,
  type PresenceSettings,
} from '../../src/machines/avatarPresence.machine.js';
import { fuzzRuns } from '../support/fuzzRuns.js';

const stepper = createMachineStepper(avatarPresenceMachine);
type Snap = ReturnType<typeof stepper.initial>;

const T0 = 1_700_000_000_000;
const settings: PresenceSettings = {
  perAvatarCooldownMs: 120_000,
  recentSummonCooldownMs: 20_000,
  stickyAffinityTtlMs: 60_000,
  attentionHalfLifeMs: 60_000,
  summonConversationDurationMs: 300_000,
};
const input: AvatarPresenceInput = { channelId: 'chan-1', avatarId: 'ava', settings, at: T0 };

const run = (events: AvatarPresenceEvent[], from: Snap = stepper.initial(input)) =>
  events.reduce(stepper.step, from);
const summon = (at: number, turns = 5): AvatarPresenceEvent => ({ type: 'presence.summoned', at, turns });
const claim = (at: number, turnId: string, rung: Rung): AvatarPresenceEvent => ({
  type: 'presence.claim',
  at,
  turnId,
  rung,
});
const generated = (at: number, turnId: string): AvatarPresenceEvent => ({
  type: 'presence.generated',
  at,
  turnId,
});
const delivered = (at: number, turnId: string): AvatarPresenceEvent => ({
  type: 'presence.delivered',
  at,
  turnId,
});
const failed = (at: number, turnId: string): AvatarPresenceEvent => ({ type: 'presence.failed', at, turnId });
const tick = (at: number): AvatarPresenceEvent => ({ type: 'presence.tick', at });
const mention = (at: number, by: string, grantTurns = 2): AvatarPresenceEvent => ({
  type: 'presence.mentioned',
  at,
  by,
  grantTurns,
});
const speak = (at: number, turnId: string, rung: Rung) => [
  claim(at, turnId, rung),
  generated(at + 1_000, turnId),
  delivered(at + 2_000, turnId),
];

describe('avatarPresence: start', () => {
  it('starts present, ambient and ready with nothing granted', () => {
    const s = stepper.initial(input);
    expect(s.value).toEqual({ present: { mode: 'ambient', turn: 'ready' } });
    expect(s.context).toMatchObject({
      now: T0,
      summonTurns: 0,
      grantedAt: null,
      conversingUntil: 0,
      cooldownUntil: 0,
      lastSpokeAt: null,
      claim: null,
      delivered: 0,
      attention: { value: 0.25, at: T0 }, // a newcomer is mildly attentive
      affinity: {},
    });
  });
});

describe('avatarPresence: summon and conversation mode', () => {
  it('grants turns and conversation mode, which ends after summonConversationDurationMs', () => {
    const s = run([summon(T0 + 1_000)]);
    expect(s.matches({ present: { mode: 'conversing' } })).toBe(true);
    expect(s.context.summonTurns).toBe(5);
    expect(s.context.grantedAt).toBe(T0 + 1_000);
    expect(s.context.conversingUntil).toBe(T0 + 301_000);
    expect(s.context.attention).toEqual({ value: 1, at: T0 + 1_000 });

    expect(stepper.step(s, tick(T0 + 300_999)).matches({ present: { mode: 'conversing' } })).toBe(true);
    const over = stepper.step(s, tick(T0 + 301_000));
    expect(over.matches({ present: { mode: 'ambient' } })).toBe(true);
    // The summon's turns last as long as its conversation (seed 003): then ordinary rules apply.
    expect(guaranteedTurns(over.context, T0 + 300_999)).toBe(5);
    expect(guaranteedTurns(over.context, T0 + 301_000)).toBe(0);
  });

  it('keeps turns a mention granted after the conversation ended', () => {
    const s = run([summon(T0), tick(T0 + 301_000), mention(T0 + 310_000, 'u1', 2)]);
    expect(guaranteedTurns(s.context, T0 + 400_000)).toBe(2);
  });

  it('a second summon extends the conversation and never lowers the turns', () => {
    const s = run([summon(T0 + 1_000, 5), summon(T0 + 100_000, 2)]);
    expect(s.context.summonTurns).toBe(5);
    expect(s.context.conversingUntil).toBe(T0 + 400_000);
    expect(s.context.grantedAt).toBe(T0 + 100_000);
  });

  it('ends conversation mode on whatever event first reaches its end, not only a tick', () => {
    const s = run([summon(T0), mention(T0 + 300_000, 'u1')]);
    expect(s.matches({ present: { mode: 'ambient' } })).toBe(true);
  });
});

describe('avatarPresence: claiming, generating, delivering', () => {
  it.each(['summon', 'follow-up'] as const)(
    'delivering a %s claim spends exactly one summon turn',
    (rung) => {
      const s = run([summon(T0), ...speak(T0 + 10_000, 'turn-1', rung)]);
      expect(s.matches({ present: { turn: 'ready' } })).toBe(true);
      expect(s.context.summonTurns).toBe(4);
      expect(s.context.claim).toBeNull();
      expect(s.context.delivered).toBe(1);
      expect(s.context.lastSpokeAt).toBe(T0 + 12_000);
    },
  );

  it.each(['reply', 'thread', 'affinity', 'mention', 'round-robin', 'initiative'] as const)(
    'delivering a %s claim while the summon conversation is live spends one summon turn',
    (rung) => {
      const s = run([summon(T0), ...speak(T0 + 10_000, 'turn-1', rung)]);
      expect(s.context.summonTurns).toBe(4);
      expect(s.context.delivered).toBe(1);
    },
  );

  it('delivering the greeting spends no summon turn', () => {
    const s = run([summon(T0), ...speak(T0 + 10_000, 'turn-1', 'greeting')]);
    expect(s.context.summonTurns).toBe(5);
  });

  it.each(['reply', 'thread', 'affinity', 'mention', 'round-robin', 'initiative'] as const)(
    'delivering a %s claim outside a summon conversation spends no turn a mention granted',
    (rung) => {
      const s = run([mention(T0, 'u1', 2), ...speak(T0 + 10_000, 'turn-1', rung)]);
      expect(s.context.summonTurns).toBe(2);
    },
  );

  it('moves claimed -> generating -> ready, holding the claim until delivery', () => {
    const claimed = run([summon(T0), claim(T0 + 1_000, 'turn-1', 'summon')]);
    expect(claimed.matches({ present: { turn: 'claimed' } })).toBe(true);
    expect(claimed.context.claim).toEqual({ turnId: 'turn-1', rung: 'summon', claimedAt: T0 + 1_000 });
    expect(claimed.context.summonTurns).toBe(5); // not spent on claim

    const generating = stepper.step(claimed, generated(T0 + 2_000, 'turn-1'));
    expect(generating.matches({ present: { turn: 'generating' } })).toBe(true);
    expect(generating.context.summonTurns).toBe(5); // not spent on generation either
    expect(generating.context.claim).not.toBeNull();

    const done = stepper.step(generating, delivered(T0 + 3_000, 'turn-1'));
    expect(done.matches({ present: { turn: 'ready' } })).toBe(true);
    expect(done.context.summonTurns).toBe(4);
  });

  it('can deliver straight from claimed', () => {
    const s = run([summon(T0), claim(T0 + 1_000, 't', 'summon'), delivered(T0 + 2_000, 't')]);
    expect(s.matches({ present: { turn: 'ready' } })).toBe(true);
    expect(s.context.summonTurns).toBe(4);
  });

  it('uses the recent-summon cooldown while conversing', () => {
    const s = run([summon(T0), ...speak(T0 + 10_000, 't', 'summon')]);
    expect(s.context.cooldownUntil).toBe(T0 + 12_000 + settings.recentSummonCooldownMs);
  });

  it('uses the per-avatar cooldown when not conversing', () => {
    const ambient = run([...speak(T0 + 10_000, 't', 'reply')]);
    expect(ambient.context.cooldownUntil).toBe(T0 + 12_000 + settings.perAvatarCooldownMs);
    // After the conversation has ended, too.
    const after = run([summon(T0), ...speak(T0 + 400_000, 't', 'summon')]);
    expect(after.matches({ present: { mode: 'ambient' } })).toBe(true);
    expect(after.context.cooldownUntil).toBe(T0 + 402_000 + settings.perAvatarCooldownMs);
  });

  it.each([
    ['claimed', [claim(T0 + 1_000, 't', 'summon')]],
    ['generating', [claim(T0 + 1_000, 't', 'summon'), generated(T0 + 2_000, 't')]],
  ] as const)('failure from %s releases the claim and spends nothing', (_state, events) => {
    const before = run([summon(T0), ...events]);
    const s = stepper.step(before, failed(T0 + 5_000, 't'));
    expect(s.matches({ present: { turn: 'ready' } })).toBe(true);
    expect(s.context.claim).toBeNull();
    expect(s.context.summonTurns).toBe(5);
    expect(s.context.delivered).toBe(0);
    expect(s.context.lastSpokeAt).toBeNull();
    expect(s.context.cooldownUntil).toBe(0);
  });

  it('ignores generated / delivered / failed for another turn id', () => {
    for (const prefix of [
      [claim(T0 + 1_000, 't', 'summon')],
      [claim(T0 + 1_000, 't', 'summon'), generated(T0 + 2_000, 't')],
    ]) {
      const before = run([summon(T0), ...prefix]);
      for (const e of [
        generated(T0 + 9_000, 'other'),
        delivered(T0 + 9_000, 'other'),
        failed(T0 + 9_000, 'other'),
      ]) {
        const s = stepper.step(before, e);
        expect(s.value).toEqual(before.value);
        expect(s.context).toEqual(before.context);
      }
    }
  });

  it('ignores turn events when nothing is claimed', () => {
    const before = run([summon(T0)]);
    for (const e of [generated(T0 + 1, 't'), delivered(T0 + 1, 't'), failed(T0 + 1, 't')]) {
      const s = stepper.step(before, e);
      expect(s.value).toEqual(before.value);
      expect(s.context).toEqual(before.context);
    }
  });

  it('ignores a second claim while busy (claimed or generating)', () => {
    const claimed = run([summon(T0), claim(T0 + 1_000, 'first', 'summon')]);
    const again = stepper.step(claimed, claim(T0 + 2_000, 'second', 'reply'));
    expect(again.context.claim).toEqual({ turnId: 'first', rung: 'summon', claimedAt: T0 + 1_000 });
    const generating = stepper.step(claimed, generated(T0 + 3_000, 'first'));
    const again2 = stepper.step(generating, claim(T0 + 4_000, 'second', 'reply'));
    expect(again2.value).toEqual(generating.value);
    expect(again2.context.claim?.turnId).toBe('first');
    // The first turn still completes normally.
    expect(stepper.step(again2, delivered(T0 + 5_000, 'first')).context.summonTurns).toBe(4);
  });

  it('never lets summon turns go negative', () => {
    let s = run([summon(T0, 1)]);
    for (let i = 0; i < 4; i++)
      s = run(speak(T0 + (i + 1) * 10_000, `t${i}`, i % 2 ? 'follow-up' : 'summon'), s);
    expect(s.context.summonTurns).toBe(0);
    expect(s.context.delivered).toBe(4);
    const never = run(speak(T0 + 1_000, 't', 'summon'));
    expect(never.context.summonTurns).toBe(0);
  });
});

describe('avatarPresence: mentions', () => {
  it('grants turns only when none are left, and records who mentioned and when', () => {
    const fresh = run([mention(T0 + 1_000, 'bob', 2)]);
    expect(fresh.context.summonTurns).toBe(2);
    expect(fresh.context.grantedAt).toBe(T0 + 1_000);
    expect(fresh.context.lastMentionAt).toBe(T0 + 1_000);
    expect(fresh.context.lastMentionBy).toBe('bob');
    // A mention is not a summon: no conversation mode.
    expect(fresh.matches({ present: { mode: 'ambient' } })).toBe(true);

    const summoned = run([summon(T0, 5), mention(T0 + 1_000, 'carol', 2)]);
    expect(summoned.context.summonTurns).toBe(5);
    expect(summoned.context.grantedAt).toBe(T0);
    expect(summoned.context.lastMentionBy).toBe('carol');
  });

  it('grants again once the granted turns are spent', () => {
    const spent = run([mention(T0, 'bob', 1), ...speak(T0 + 1_000, 't', 'summon')]);
    expect(spent.context.summonTurns).toBe(0);
    expect(run([mention(T0 + 10_000, 'carol', 1)], spent).context.summonTurns).toBe(1);
  });

  it('a mention granting zero turns leaves zero and does not count as a grant', () => {
    const s = run([mention(T0 + 1_000, 'bob', 0)]);
    expect(s.context.summonTurns).toBe(0);
    expect(s.context.grantedAt).toBeNull();
  });
});

describe('avatarPresence: sticky affinity', () => {
  const addressed = (at: number, userId: string): AvatarPresenceEvent => ({
    type: 'presence.addressedBy',
    at,
    userId,
  });

  it('gives affinity that expires after stickyAffinityTtlMs', () => {
    const s = run([addressed(T0 + 1_000, 'u1')]);
    expect(hasAffinity(s.context, 'u1', T0 + 1_000)).toBe(true);
    expect(hasAffinity(s.context, 'u1', T0 + 60_999)).toBe(true);
    expect(hasAffinity(s.context, 'u1', T0 + 61_000)).toBe(false);
    expect(hasAffinity(s.context, 'u2', T0 + 1_000)).toBe(false);
  });

  it('is refreshed by being addressed again, and expired entries are pruned', () => {
    const s = run([addressed(T0, 'u1'), addressed(T0 + 10_000, 'u2'), addressed(T0 + 50_000, 'u1')]);
    expect(hasAffinity(s.context, 'u1', T0 + 100_000)).toBe(true);
    expect(hasAffinity(s.context, 'u2', T0 + 100_000)).toBe(false);
    const pruned = run([addressed(T0 + 200_000, 'u3')], s);
    expect(Object.keys(pruned.context.affinity)).toEqual(['u3']);
  });
});

describe('avatarPresence: attention', () => {
  it('decays by elapsed time and is never compounded by repeated reads', () => {
    const s = run([summon(T0)]);
    const { attention } = s.context;
    const h = settings.attentionHalfLifeMs;
    expect(attentionAt(attention, T0 + h, h)).toBeCloseTo(0.5, 12);
    expect(attentionAt(attention, T0 + 2 * h, h)).toBeCloseTo(0.25, 12);
    // Reading many times, or stepping through ticks, changes nothing.
    for (let i = 0; i < 10; i++) attentionAt(attention, T0 + h, h);
    expect(attentionAt(attention, T0 + h, h)).toBeCloseTo(0.5, 12);
    const ticked = run([tick(T0 + 10_000), tick(T0 + 20_000), tick(T0 + 30_000)], s);
    expect(ticked.context.attention).toEqual(attention);
    expect(attentionAt(ticked.context.attention, T0 + h, h)).toBeCloseTo(0.5, 12);
  });

  it('a mention boosts the decayed attention, capped at 1', () => {
    const h = settings.attentionHalfLifeMs;
    const s = run([summon(T0), mention(T0 + 2 * h, 'bob')]);
    expect(s.context.attention.at).toBe(T0 + 2 * h);
    expect(s.context.attention.value).toBeCloseTo(0.25 + 0.5, 12);
    const capped = run([summon(T0), mention(T0 + 1, 'bob')]);
    expect(capped.context.attention.value).toBe(1);
  });

  it('a delivery boosts attention a little', () => {
    const s = run(speak(T0, 't', 'reply'));
    // the newcomer's 0.25, decayed over the 2 s until delivery, plus 0.2
    expect(s.context.attention.value).toBeCloseTo(
      0.25 * 2 ** (-2_000 / settings.attentionHalfLifeMs) + 0.2,
      12,
    );
    expect(s.context.attention.at).toBe(T0 + 2_000);
  });
});

describe('avatarPresence: dismissal', () => {
  it('is final, drops the claim and ignores everything after', () => {
    const claimed = run([summon(T0), claim(T0 + 1_000, 't', 'summon')]);
    const gone = stepper.step(claimed, { type: 'presence.dismissed', at: T0 + 2_000 });
    expect(gone.value).toBe('dismissed');
    expect(gone.status).toBe('done');
    expect(gone.context.claim).toBeNull();
    expect(gone.context.summonTurns).toBe(5);
    for (const e of [
      delivered(T0 + 3_000, 't'),
      summon(T0 + 4_000),
      claim(T0 + 5_000, 'u', 'reply'),
      mention(T0 + 6_000, 'bob'),
      tick(T0 + 10_000_000),
    ]) {
      const after = stepper.step(gone, e);
      expect(after.value).toBe('dismissed');
      expect(after.context).toEqual(gone.context);
    }
  });
});

describe('avatarPresence: as a live actor on a simulated clock', () => {
  it('runs a summon conversation: three turns spoken, conversation over, ambient again', () => {
    const actor = createActor(avatarPresenceMachine, { input, clock: new SimulatedClock() });
    actor.start();
    actor.send(summon(T0, 3));
    for (let i = 0; i < 3; i++)
      for (const e of speak(T0 + (i + 1) * 30_000, `t${i}`, 'summon')) actor.send(e);
    expect(actor.getSnapshot().context.summonTurns).toBe(0);
    expect(actor.getSnapshot().matches({ present: { mode: 'conversing' } })).toBe(true);
    actor.send(tick(actor.getSnapshot().context.conversingUntil));
    expect(actor.getSnapshot().value).toEqual({ present: { mode: 'ambient', turn: 'ready' } });
    actor.send({ type: 'presence.dismissed', at: T0 + 400_000 });
    expect(actor.getSnapshot().status).toBe('done');
    actor.stop();
  });
});

describe('avatarPresence: properties over random event sequences', () => {
  const turnIds = ['t1', 't2'];
  const rungs: Rung[] = ['summon', 'follow-up', 'reply', 'mention'];
  const eventArb = fc.oneof(
    fc.record({ type: fc.constant('presence.summoned' as const), turns: fc.integer({ min: 0, max: 5 }) }),
    fc.record({
      type: fc.constant('presence.mentioned' as const),
      by: fc.constantFrom('u1', 'u2'),
      grantTurns: fc.integer({ min: 0, max: 3 }),
    }),
    fc.record({ type: fc.constant('presence.addressedBy' as const), userId: fc.constantFrom('u1', 'u2') }),
    fc.record({
      type: fc.constant('presence.claim' as const),
      turnId: fc.constantFrom(...turnIds),
      rung: fc.constantFrom(...rungs),
    }),
    fc.record({
      type: fc.constantFrom(
        'presence.generated' as const,
        'presence.delivered' as const,
        'presence.failed' as const,
      ),
      turnId: fc.constantFrom(...turnIds),
    }),
    fc.record({ type: fc.constant('presence.tick' as const) }),
    fc.record({ type: fc.constant('presence.dismissed' as const) }),
  );

  it('keeps turns non-negative, a claim exactly while a turn is in flight, and spends only on delivery', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(eventArb, fc.integer({ min: 0, max: 200_000 })), { maxLength: 30 }),
        (steps) => {
          let at = T0;
          let s = stepper.initial(input);
          for (const [e, dt] of steps) {
            at += dt;
            const before = s;
            s = stepper.step(s, { ...e, at } as AvatarPresenceEvent);
            const c = s.context;
            expect(c.summonTurns).toBeGreaterThanOrEqual(0);
            const inFlight =
              s.matches({ present: { turn: 'claimed' } }) || s.matches({ present: { turn: 'generating' } });
            expect(c.claim !== null).toBe(inFlight);
            if (s.matches('present')) {
              expect(s.matches({ present: { mode: 'conversing' } })).toBe(c.now < c.conversingUntil);
            }
            // Turns held (a summon's expire with its conversation) go down only by a delivery, one
            // at a time: of a summon or follow-up turn, or of any but the greeting while conversing.
            const held = guaranteedTurns(before.context, at);
            if (guaranteedTurns(c, at) < held) {
              expect(e.type).toBe('presence.delivered');
              expect(guaranteedTurns(c, at)).toBe(held - 1);
              const rung = before.context.claim?.rung;
              if (at >= before.context.conversingUntil) expect(['summon', 'follow-up']).toContain(rung);
              else expect(rung).not.toBe('greeting');
            }
            if (before.status === 'done') expect(c).toEqual(before.context);
          }
        },
      ),
      { numRuns: fuzzRuns(300) },
    );
  });
});
