import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import { createMachineStepper } from '../../src/engine/machineStepper.js';
import {
  type ConversationThreadEvent,
  type ConversationThreadInput,
  conversationThreadMachine,
  threadDeadline,
} from '../../src/machines/conversationThread.machine.js';
import { fuzzRuns } from '../support/fuzzRuns.js';

const stepper = createMachineStepper(conversationThreadMachine);

const T0 = 1_700_000_000_000;

function input(overrides: Partial<ConversationThreadInput> = {}): ConversationThreadInput {
  return {
    id: 'thread-1',
    channelId: 'chan-1',
    mode: 'mention',
    participants: ['alice', 'bob'],
    maxTurns: 6,
    ttlMs: 180_000,
    quietMs: 30_000,
    extendOnActivity: true,
    extensionMs: 90_000,
    at: T0,
    ...overrides,
  };
}

function run(events: ConversationThreadEvent[], overrides: Partial<ConversationThreadInput> = {}) {
  return events.reduce(stepper.step, stepper.initial(input(overrides)));
}

const turn = (
  at: number,
  speakerId: string,
  addressed: string[],
  farewell = false,
): Extract<ConversationThreadEvent, { type: 'thread.turn' }> => ({
  type: 'thread.turn',
  at,
  speakerId,
  addressed,
  farewell,
});
const tick = (at: number): ConversationThreadEvent => ({ type: 'thread.tick', at });

describe('conversationThread: start', () => {
  it('starts active with an absolute deadline and no turns', () => {
    const s = stepper.initial(input({ participants: ['alice', 'bob', 'alice'] }));
    expect(s.value).toBe('active');
    expect(s.status).toBe('active');
    expect(s.context).toMatchObject({
      participants: ['alice', 'bob'],
      departed: [],
      turnCount: 0,
      startedAt: T0,
      now: T0,
      expiresAt: T0 + 180_000,
      quietDeadline: null,
      lastSpeakerId: null,
      detail: null,
    });
  });
});

describe('conversationThread: turns and the turn limit', () => {
  it('counts each turn once and records the last speaker', () => {
    const s = run([turn(T0 + 1_000, 'alice', ['bob']), turn(T0 + 2_000, 'bob', ['alice'])]);
    expect(s.value).toBe('active');
    expect(s.context.turnCount).toBe(2);
    expect(s.context.lastSpeakerId).toBe('bob');
    expect(s.context.lastActivityAt).toBe(T0 + 2_000);
  });

  it('is exhausted exactly when the turn count reaches maxTurns', () => {
    const turns = [0, 1, 2].map((i) =>
      turn(T0 + (i + 1) * 1_000, i % 2 ? 'bob' : 'alice', [i % 2 ? 'alice' : 'bob']),
    );
    const beforeLimit = run(turns.slice(0, 2), { maxTurns: 3 });
    expect(beforeLimit.value).toBe('active');
    expect(beforeLimit.context.turnCount).toBe(2);

    const atLimit = run(turns, { maxTurns: 3 });
    expect(atLimit.value).toBe('exhausted');
    expect(atLimit.status).toBe('done');
    expect(atLimit.context.turnCount).toBe(3);
    expect(atLimit.context.detail).toBe('turn limit of 3 reached');
  });

  it('never counts past maxTurns, whatever follows', () => {
    const events = Array.from({ length: 10 }, (_, i) => turn(T0 + (i + 1) * 1_000, 'alice', ['bob']));
    const s = run(events, { maxTurns: 4 });
    expect(s.value).toBe('exhausted');
    expect(s.context.turnCount).toBe(4);
  });
});

describe('conversationThread: expiry', () => {
  it('extends the deadline on activity to now + the extension (half the TTL), never pulling it in', () => {
    // A turn early in the thread leaves the deadline where it is: now + TTL/2 comes sooner.
    const early = run([turn(T0 + 1_000, 'alice', ['bob'])]);
    expect(early.context.expiresAt).toBe(T0 + 180_000);
    const s = run([turn(T0 + 100_000, 'alice', ['bob'])]);
    expect(s.context.expiresAt).toBe(T0 + 100_000 + 90_000);
    const later = stepper.step(s, turn(T0 + 100_500, 'bob', ['alice']));
    expect(later.context.expiresAt).toBe(T0 + 100_500 + 90_000);
    expect(stepper.step(later, tick(T0 + 190_499)).value).toBe('active');
    expect(stepper.step(later, tick(T0 + 190_500)).value).toBe('expired');
  });

  it('keeps the original deadline when extendOnActivity is off', () => {
    const s = run([turn(T0 + 100_000, 'alice', ['bob']), turn(T0 + 170_000, 'bob', ['alice'])], {
      extendOnActivity: false,
    });
    expect(s.context.expiresAt).toBe(T0 + 180_000);
    expect(stepper.step(s, tick(T0 + 179_999)).value).toBe('active');
    const expired = stepper.step(s, tick(T0 + 180_000));
    expect(expired.value).toBe('expired');
    expect(expired.context.detail).toBe('deadline passed after 2 turns');
  });

  it('expires when a tick reaches expiresAt while someone is still addressed', () => {
    const s = run([turn(T0 + 1_000, 'alice', ['bob'])]);
    expect(s.context.quietDeadline).toBeNull();
    expect(stepper.step(s, tick(s.context.expiresAt - 1)).value).toBe('active');
    const expired = stepper.step(s, tick(s.context.expiresAt));
    expect(expired.value).toBe('expired');
    expect(expired.status).toBe('done');
    expect(expired.context.detail).toBe('deadline passed after 1 turns');
  });

  it('expires an untouched thread at its TTL', () => {
    const s = run([tick(T0 + 180_000)]);
    expect(s.value).toBe('expired');
    expect(s.context.detail).toBe('deadline passed after 0 turns');
  });

  it('does not count a turn delivered at or after the deadline (nothing is said in an expired thread)', () => {
    const s = run([turn(T0 + 1_000, 'alice', ['bob'])]);
    const deadline = s.context.expiresAt;
    for (const at of [deadline, deadline + 5_000]) {
      const late = stepper.step(s, turn(at, 'bob', ['alice']));
      expect(late.value).toBe('expired');
      expect(late.context.turnCount).toBe(1);
      expect(late.context.lastSpeakerId).toBe('alice');
      expect(late.context.expiresAt).toBe(deadline);
      expect(late.context.detail).toBe('deadline passed after 1 turns');
    }
    // One millisecond earlier it still counts.
    const inTime = stepper.step(s, turn(deadline - 1, 'bob', ['alice']));
    expect(inTime.value).toBe('active');
    expect(inTime.context.turnCount).toBe(2);
  });
});

describe('conversationThread: natural conclusion', () => {
  it('concludes by quiet when the last turn addressed nobody and quietMs passes', () => {
    const s = run([turn(T0 + 1_000, 'alice', ['bob']), turn(T0 + 2_000, 'bob', [])]);
    expect(s.context.quietDeadline).toBe(T0 + 2_000 + 30_000);
    expect(stepper.step(s, tick(T0 + 31_999)).value).toBe('active');
    const quiet = stepper.step(s, tick(T0 + 32_000));
    expect(quiet.value).toBe('concluded');
    expect(quiet.status).toBe('done');
    expect(quiet.context.detail).toBe('nobody was addressed for 30s');
  });

  it('treats addressing only oneself as addressing nobody', () => {
    const s = run([turn(T0 + 1_000, 'alice', ['alice'])]);
    expect(s.context.quietDeadline).toBe(T0 + 31_000);
  });

  it('cancels the quiet conclusion when someone is addressed again', () => {
    const s = run([turn(T0 + 1_000, 'bob', []), turn(T0 + 5_000, 'alice', ['bob'])]);
    expect(s.context.quietDeadline).toBeNull();
    expect(stepper.step(s, tick(T0 + 31_000)).value).toBe('active');
  });

  it('does not count a turn delivered at the quiet deadline', () => {
    const s = run([turn(T0 + 1_000, 'bob', [])]);
    const late = stepper.step(s, turn(T0 + 31_000, 'alice', ['bob']));
    expect(late.value).toBe('concluded');
    expect(late.context.turnCount).toBe(1);
    expect(late.context.lastSpeakerId).toBe('bob');
  });

  it('concludes a two-party thread when one participant says goodbye', () => {
    const s = run([turn(T0 + 1_000, 'alice', ['bob']), turn(T0 + 2_000, 'bob', ['alice'], true)]);
    expect(s.value).toBe('concluded');
    expect(s.context.turnCount).toBe(2);
    expect(s.context.departed).toEqual(['bob']);
    expect(s.context.detail).toBe('participants said goodbye');
  });

  it('keeps a three-party thread going until fewer than two remain', () => {
    const three = { participants: ['alice', 'bob', 'carol'] };
    const one = run([turn(T0 + 1_000, 'alice', ['bob'], true)], three);
    expect(one.value).toBe('active');
    const two = stepper.step(one, { type: 'thread.leave', at: T0 + 2_000, avatarId: 'carol' });
    expect(two.value).toBe('concluded');
    expect(two.context.detail).toBe('participants said goodbye');
  });

  it('ignores a leave from someone who is not a participant', () => {
    const s = run([{ type: 'thread.leave', at: T0 + 1_000, avatarId: 'mallory' }]);
    expect(s.value).toBe('active');
    expect(s.context.departed).toEqual([]);
    expect(s.context.now).toBe(T0 + 1_000);
  });

  it('has the turn limit win over a farewell on the last turn', () => {
    const s = run([turn(T0 + 1_000, 'alice', ['bob']), turn(T0 + 2_000, 'bob', ['alice'], true)], {
      maxTurns: 2,
    });
    expect(s.value).toBe('exhausted');
    expect(s.context.detail).toBe('turn limit of 2 reached');
  });
});

describe('conversationThread: participants', () => {
  it('adds a participant who joins, once', () => {
    const s = run([
      { type: 'thread.join', at: T0 + 1_000, avatarId: 'carol' },
      { type: 'thread.join', at: T0 + 2_000, avatarId: 'carol' },
    ]);
    expect(s.context.participants).toEqual(['alice', 'bob', 'carol']);
    expect(s.context.now).toBe(T0 + 2_000);
    // A join is not activity: the deadline does not move.
    expect(s.context.expiresAt).toBe(T0 + 180_000);
  });

  it('adds a non-participant speaker', () => {
    const s = run([turn(T0 + 1_000, 'carol', ['alice'])]);
    expect(s.context.participants).toEqual(['alice', 'bob', 'carol']);
    expect(s.context.turnCount).toBe(1);
    expect(s.context.lastSpeakerId).toBe('carol');
  });
});

describe('conversationThread: final states', () => {
  const finals: Array<[string, ConversationThreadEvent[], Partial<ConversationThreadInput>]> = [
    ['exhausted', [turn(T0 + 1_000, 'alice', ['bob'])], { maxTurns: 1 }],
    ['expired', [tick(T0 + 180_000)], {}],
    ['concluded', [turn(T0 + 1_000, 'alice', ['bob'], true)], {}],
  ];
  it.each(finals)('%s ignores every further event', (state, events, overrides) => {
    const done = run(events, overrides);
    expect(done.value).toBe(state);
    expect(done.status).toBe('done');
    let s = done;
    for (const e of [
      turn(T0 + 2_000, 'bob', ['alice']),
      { type: 'thread.join', at: T0 + 3_000, avatarId: 'carol' } as const,
      { type: 'thread.leave', at: T0 + 4_000, avatarId: 'alice' } as const,
      tick(T0 + 10_000_000),
    ]) {
      s = stepper.step(s, e);
      expect(s.value).toBe(state);
      expect(s.context).toEqual(done.context);
    }
  });
});

describe('threadDeadline', () => {
  it('is the expiry when nobody is waiting for quiet', () => {
    const s = run([turn(T0 + 1_000, 'alice', ['bob'])]);
    expect(threadDeadline(s.context)).toBe(s.context.expiresAt);
  });

  it('is the quiet deadline when it comes first', () => {
    const s = run([turn(T0 + 1_000, 'alice', [])]);
    expect(threadDeadline(s.context)).toBe(T0 + 31_000);
    expect(stepper.step(s, tick(threadDeadline(s.context))).value).toBe('concluded');
  });

  it('is the expiry when it comes before the quiet deadline', () => {
    const s = run([turn(T0 + 170_000, 'alice', [])], { extendOnActivity: false });
    expect(s.context.quietDeadline).toBe(T0 + 200_000);
    expect(threadDeadline(s.context)).toBe(T0 + 180_000);
    const ended = stepper.step(s, tick(threadDeadline(s.context)));
    expect(ended.status).toBe('done');
    expect(stepper.step(s, tick(threadDeadline(s.context) - 1)).status).toBe('active');
  });

  it('is exactly when an active thread ends (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            dt: fc.integer({ min: 0, max: 60_000 }),
            speaker: fc.constantFrom('alice', 'bob', 'carol'),
            addressesSomeone: fc.boolean(),
          }),
          { maxLength: 5 },
        ),
        fc.boolean(),
        (turns, extendOnActivity) => {
          let at = T0;
          let s = stepper.initial(input({ extendOnActivity, maxTurns: 100 }));
          for (const t of turns) {
            at += t.dt;
            s = stepper.step(s, turn(at, t.speaker, t.addressesSomeone ? ['alice', 'bob'] : []));
          }
          if (s.status !== 'active') return;
          const deadline = threadDeadline(s.context);
          expect(deadline).toBeGreaterThan(s.context.now);
          expect(stepper.step(s, tick(deadline - 1)).status).toBe('active');
          expect(stepper.step(s, tick(deadline)).status).toBe('done');
        },
      ),
      { numRuns: fuzzRuns(200) },
    );
  });
});

describe('conversationThread: as a live actor on a simulated clock', () => {
  it('runs a mention thread to a natural conclusion', () => {
    const actor = createActor(conversationThreadMachine, { input: input(), clock: new SimulatedClock() });
    actor.start();
    actor.send(turn(T0 + 1_000, 'alice', ['bob']));
    actor.send(turn(T0 + 4_000, 'bob', ['alice']));
    actor.send(turn(T0 + 6_000, 'alice', []));
    expect(actor.getSnapshot().value).toBe('active');
    actor.send(tick(threadDeadline(actor.getSnapshot().context)));
    const s = actor.getSnapshot();
    expect(s.value).toBe('concluded');
    expect(s.status).toBe('done');
    expect(s.context.turnCount).toBe(3);
    expect(s.context.detail).toBe('nobody was addressed for 30s');
    actor.stop();
  });

  it('restores from a persisted snapshot and still ends at the absolute deadline', () => {
    const actor = createActor(conversationThreadMachine, { input: input(), clock: new SimulatedClock() });
    actor.start();
    actor.send(turn(T0 + 1_000, 'alice', ['bob']));
    const persisted = actor.getPersistedSnapshot();
    actor.stop();
    const restored = createActor(conversationThreadMachine, {
      input: input(),
      snapshot: persisted,
      clock: new SimulatedClock(),
    });
    restored.start();
    expect(restored.getSnapshot().context.expiresAt).toBe(T0 + 180_000);
    restored.send(tick(T0 + 180_000));
    expect(restored.getSnapshot().value).toBe('expired');
    restored.stop();
  });
});

describe('conversationThread: properties over random event sequences', () => {
  const eventArb = fc.oneof(
    fc.record({
      type: fc.constant('thread.turn' as const),
      dt: fc.integer({ min: 0, max: 120_000 }),
      speakerId: fc.constantFrom('alice', 'bob', 'carol'),
      addressed: fc.subarray(['alice', 'bob', 'carol']),
      farewell: fc.boolean(),
    }),
    fc.record({
      type: fc.constantFrom('thread.join' as const, 'thread.leave' as const),
      dt: fc.integer({ min: 0, max: 60_000 }),
      avatarId: fc.constantFrom('alice', 'bob', 'carol', 'dave'),
    }),
    fc.record({ type: fc.constant('thread.tick' as const), dt: fc.integer({ min: 0, max: 200_000 }) }),
  );

  it('never counts past maxTurns, never pulls a deadline in, and ends with a reason', () => {
    fc.assert(
      fc.property(
        fc.array(eventArb, { maxLength: 25 }),
        fc.integer({ min: 1, max: 8 }),
        fc.boolean(),
        (steps, maxTurns, extendOnActivity) => {
          let at = T0;
          let s = stepper.initial(
            input({ maxTurns, extendOnActivity, participants: ['alice', 'bob', 'carol'] }),
          );
          for (const { dt, ...rest } of steps) {
            at += dt;
            const before = s;
            s = stepper.step(s, { ...rest, at } as ConversationThreadEvent);
            expect(s.context.turnCount).toBeLessThanOrEqual(maxTurns);
            expect(s.context.expiresAt).toBeGreaterThanOrEqual(before.context.expiresAt);
            if (before.status === 'done') expect(s.context).toEqual(before.context);
            expect(s.status === 'done').toBe(s.context.detail !== null);
          }
        },
      ),
      { numRuns: fuzzRuns(300) },
    );
  });
});
