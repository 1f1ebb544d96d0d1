import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AnyStateMachine,
  createActor,
  type EventFromLogic,
  type InputFrom,
  SimulatedClock,
} from 'xstate';
import { createMachineStepper } from '../../src/engine/machineStepper.js';
import type { Rung } from '../../src/floor/floorTypes.js';
import {
  type AvatarPresenceEvent,
  type AvatarPresenceInput,
  avatarPresenceMachine,
} from '../../src/machines/avatarPresence.machine.js';
import {
  type ConversationThreadEvent,
  type ConversationThreadInput,
  conversationThreadMachine,
} from '../../src/machines/conversationThread.machine.js';
import { fuzzRuns } from '../support/fuzzRuns.js';

const T0 = 1_700_000_000_000;

const threadInput: ConversationThreadInput = {
  id: 'thread-1',
  channelId: 'chan-1',
  mode: 'mention',
  participants: ['alice', 'bob', 'carol'],
  maxTurns: 6,
  ttlMs: 180_000,
  quietMs: 30_000,
  extendOnActivity: true,
  extensionMs: 90_000,
  at: T0,
};

const presenceInput: AvatarPresenceInput = {
  channelId: 'chan-1',
  avatarId: 'ava',
  at: T0,
  settings: {
    perAvatarCooldownMs: 120_000,
    recentSummonCooldownMs: 20_000,
    stickyAffinityTtlMs: 60_000,
    attentionHalfLifeMs: 60_000,
    summonConversationDurationMs: 300_000,
  },
};

// Times mostly move forward, sometimes sideways or a little back (out-of-order delivery).
const dtArb = fc.integer({ min: -5_000, max: 150_000 });
const avatarArb = fc.constantFrom('alice', 'bob', 'carol', 'dave');

const threadEventArb = fc.oneof(
  fc.record({
    type: fc.constant('thread.turn' as const),
    speakerId: avatarArb,
    addressed: fc.subarray(['alice', 'bob', 'carol', 'dave']),
    farewell: fc.boolean(),
  }),
  fc.record({ type: fc.constantFrom('thread.join' as const, 'thread.leave' as const), avatarId: avatarArb }),
  fc.record({ type: fc.constant('thread.tick' as const) }),
);

const turnIdArb = fc.constantFrom('t1', 't2', 't3');
const rungArb = fc.constantFrom<Rung>(
  'reply',
  'thread',
  'summon',
  'affinity',
  'mention',
  'follow-up',
  'greeting',
);
const presenceEventArb = fc.oneof(
  fc.record({ type: fc.constant('presence.summoned' as const), turns: fc.integer({ min: 0, max: 5 }) }),
  fc.record({
    type: fc.constant('presence.mentioned' as const),
    by: fc.constantFrom('u1', 'u2'),
    grantTurns: fc.integer({ min: 0, max: 3 }),
  }),
  fc.record({ type: fc.constant('presence.addressedBy' as const), userId: fc.constantFrom('u1', 'u2') }),
  fc.record({ type: fc.constant('presence.claim' as const), turnId: turnIdArb, rung: rungArb }),
  fc.record({
    type: fc.constantFrom(
      'presence.generated' as const,
      'presence.delivered' as const,
      'presence.failed' as const,
    ),
    turnId: turnIdArb,
  }),
  fc.record({ type: fc.constant('presence.tick' as const) }),
  fc.record({ type: fc.constant('presence.dismissed' as const) }),
);

/** Gives a generated list of events their times. */
function timed<E>(steps: Array<[E, number]>): Array<E & { at: number }> {
  let at = T0;
  return steps.map(([event, dt]) => {
    at += dt;
    return { ...event, at };
  });
}

const threadEventsArb = fc
  .array(fc.tuple(threadEventArb, dtArb), { maxLength: 30 })
  .map((steps) => timed(steps) as ConversationThreadEvent[]);
const presenceEventsArb = fc
  .array(fc.tuple(presenceEventArb, dtArb), { maxLength: 30 })
  .map((steps) => timed(steps) as AvatarPresenceEvent[]);

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/** Freezes the data of a snapshot (not the machine definition it points to). */
function freezeSnapshot(snapshot: object): void {
  const s = snapshot as { context: unknown; value: unknown; _nodes: unknown[]; children: unknown };
  deepFreeze(s.context);
  deepFreeze(s.value);
  Object.freeze(s._nodes);
  Object.freeze(s.children);
  Object.freeze(s);
}

const observable = (s: { value: unknown; context: unknown; status: string }) => ({
  value: s.value,
  context: s.context,
  status: s.status,
});

function checkAgainstLiveActor<TMachine extends AnyStateMachine>(
  machine: TMachine,
  input: unknown,
  events: ReadonlyArray<{ type: string }>,
): void {
  const stepper = createMachineStepper(machine);
  const actor = createActor(machine, { input, clock: new SimulatedClock() } as never);
  actor.start();
  let snapshot = stepper.initial(input as never);
  expect(observable(snapshot)).toEqual(observable(actor.getSnapshot()));
  for (const event of events) {
    // A finished actor warns about (and ignores) further events; the stepper must ignore them too.
    if ((actor.getSnapshot() as { status: string }).status === 'active') actor.send(event as never);
    snapshot = stepper.step(snapshot, event as never);
    expect(observable(snapshot)).toEqual(observable(actor.getSnapshot()));
  }
  actor.stop();
}

describe('createMachineStepper: same result as a live actor', () => {
  it('for conversationThread, over random event sequences', () => {
    fc.assert(
      fc.property(
        threadEventsArb,
        fc.integer({ min: 1, max: 8 }),
        fc.boolean(),
        (events, maxTurns, extend) => {
          checkAgainstLiveActor(
            conversationThreadMachine,
            { ...threadInput, maxTurns, extendOnActivity: extend },
            events,
          );
        },
      ),
      { numRuns: fuzzRuns(300) },
    );
  });

  it('for avatarPresence, over random event sequences', () => {
    fc.assert(
      fc.property(presenceEventsArb, (events) => {
        checkAgainstLiveActor(avatarPresenceMachine, presenceInput, events);
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it('gives snapshots a live actor can be restored from and carry on with', () => {
    const stepper = createMachineStepper(avatarPresenceMachine);
    fc.assert(
      fc.property(presenceEventsArb, presenceEventsArb, (first, rest) => {
        const restEvents = rest.map((e) => ({ ...e, at: e.at + 10_000_000 }));
        const mid = first.reduce(stepper.step, stepper.initial(presenceInput));
        const actor = createActor(avatarPresenceMachine, {
          input: presenceInput,
          snapshot: avatarPresenceMachine.getPersistedSnapshot(mid),
          clock: new SimulatedClock(),
        });
        actor.start();
        let snapshot = mid;
        for (const event of restEvents) {
          if (actor.getSnapshot().status === 'active') actor.send(event);
          snapshot = stepper.step(snapshot, event);
        }
        expect(observable(actor.getSnapshot())).toEqual(observable(snapshot));
        actor.stop();
      }),
      { numRuns: fuzzRuns(100) },
    );
  });
});

describe('createMachineStepper: purity', () => {
  const neverMutates = <TMachine extends AnyStateMachine>(
    machine: TMachine,
    input: InputFrom<TMachine>,
    events: fc.Arbitrary<EventFromLogic<TMachine>[]>,
  ) => {
    const stepper = createMachineStepper(machine);
    fc.assert(
      fc.property(events, (evs) => {
        let snapshot = stepper.initial(input);
        for (const event of evs) {
          const before = JSON.stringify(snapshot);
          freezeSnapshot(snapshot);
          const next = stepper.step(snapshot, event);
          expect(JSON.stringify(snapshot)).toBe(before);
          snapshot = next;
        }
      }),
      { numRuns: fuzzRuns(200) },
    );
  };

  it('never mutates the snapshot it steps (thread)', () => {
    neverMutates(conversationThreadMachine, threadInput, threadEventsArb);
  });

  it('never mutates the snapshot it steps (presence)', () => {
    neverMutates(avatarPresenceMachine, presenceInput, presenceEventsArb);
  });

  it('is deterministic: stepping the same snapshot twice gives equal results', () => {
    const stepper = createMachineStepper(avatarPresenceMachine);
    const start = stepper.step(stepper.initial(presenceInput), {
      type: 'presence.summoned',
      at: T0 + 1,
      turns: 3,
    });
    const event: AvatarPresenceEvent = { type: 'presence.claim', at: T0 + 2, turnId: 't', rung: 'summon' };
    const a = stepper.step(start, event);
    const b = stepper.step(start, event);
    expect(a).not.toBe(b);
    expect(observable(a)).toEqual(observable(b));
    expect(start.context.claim).toBeNull();
  });

  it('keeps separate steppers of the same machine independent', () => {
    const one = createMachineStepper(conversationThreadMachine);
    const two = createMachineStepper(conversationThreadMachine);
    const a = one.step(one.initial(threadInput), {
      type: 'thread.turn',
      at: T0 + 1,
      speakerId: 'alice',
      addressed: ['bob'],
      farewell: false,
    });
    const b = two.step(a, { type: 'thread.tick', at: a.context.expiresAt });
    expect(a.value).toBe('active');
    expect(b.value).toBe('expired');
    expect(one.machine).toBe(conversationThreadMachine);
  });
});
