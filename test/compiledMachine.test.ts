import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AnyStateMachine,
  assign,
  createMachine,
  type EventFromLogic,
  type InputFrom,
  setup,
} from 'xstate';
import {
  type AvatarPresenceEvent,
  avatarPresenceMachine,
  type PresenceSettings,
} from '../src/machines/avatarPresence.machine.js';
import { compileMachine } from '../src/machines/compiledMachine.js';
import {
  type ConversationThreadEvent,
  conversationThreadMachine,
} from '../src/machines/conversationThread.machine.js';
import { createMachineStepper } from '../src/machines/machineStepper.js';

const settings: PresenceSettings = {
  perAvatarCooldownMs: 1_000,
  recentSummonCooldownMs: 300,
  stickyAffinityTtlMs: 500,
  attentionHalfLifeMs: 1_000,
  summonConversationDurationMs: 2_000,
};

const view = (s: { value: unknown; context: unknown; status: string }) => ({
  value: s.value,
  context: s.context,
  status: s.status,
});

const gap = fc.integer({ min: 0, max: 900 });
const turnId = fc.constantFrom('t1', 't2', 't3');
const presenceEvent = (at: number): fc.Arbitrary<AvatarPresenceEvent> =>
  fc.oneof(
    fc.record({
      type: fc.constant('presence.summoned' as const),
      at: fc.constant(at),
      turns: fc.integer({ min: 0, max: 5 }),
    }),
    fc.record({
      type: fc.constant('presence.mentioned' as const),
      at: fc.constant(at),
      by: fc.constantFrom('u1', 'a2'),
      grantTurns: fc.integer({ min: 0, max: 3 }),
    }),
    fc.record({
      type: fc.constant('presence.addressedBy' as const),
      at: fc.constant(at),
      userId: fc.constantFrom('u1', 'u2'),
    }),
    fc.record({
      type: fc.constant('presence.claim' as const),
      at: fc.constant(at),
      turnId,
      rung: fc.constantFrom('summon', 'follow-up', 'mention', 'thread', 'reply' as const),
    }),
    fc.record({ type: fc.constant('presence.generated' as const), at: fc.constant(at), turnId }),
    fc.record({ type: fc.constant('presence.delivered' as const), at: fc.constant(at), turnId }),
    fc.record({ type: fc.constant('presence.failed' as const), at: fc.constant(at), turnId }),
    fc.record({ type: fc.constant('presence.tick' as const), at: fc.constant(at) }),
    fc.record({ type: fc.constant('presence.dismissed' as const), at: fc.constant(at) }),
  );
const threadEvent = (at: number): fc.Arbitrary<ConversationThreadEvent> =>
  fc.oneof(
    fc.record({
      type: fc.constant('thread.turn' as const),
      at: fc.constant(at),
      speakerId: fc.constantFrom('a', 'b', 'c', 'd'),
      addressed: fc.subarray(['a', 'b', 'c']),
      farewell: fc.boolean(),
    }),
    fc.record({
      type: fc.constant('thread.join' as const),
      at: fc.constant(at),
      avatarId: fc.constantFrom('c', 'd'),
    }),
    fc.record({
      type: fc.constant('thread.leave' as const),
      at: fc.constant(at),
      avatarId: fc.constantFrom('a', 'b', 'c'),
    }),
    fc.record({ type: fc.constant('thread.tick' as const), at: fc.constant(at) }),
  );
/** Events with non-decreasing times (and sometimes a late one, as the floor may send). */
const timeline = <E>(make: (at: number) => fc.Arbitrary<E>) =>
  fc.array(gap, { maxLength: 40 }).chain((gaps) => {
    const times: number[] = [];
    for (const g of gaps) times.push((times.at(-1) ?? 0) + g);
    return fc.tuple(...times.map(make));
  });

/** Steps both engines through the same events, requiring equal states after every one. */
function expectSameSteps<TMachine extends AnyStateMachine>(
  machine: TMachine,
  input: InputFrom<TMachine>,
  events: readonly EventFromLogic<TMachine>[],
): void {
  const compiled = compileMachine(machine);
  const xstate = createMachineStepper(machine);
  let a = compiled.initial(input);
  let b = xstate.initial(input);
  expect(view(a)).toEqual(view(b));
  for (const e of events) {
    a = compiled.step(a, e);
    b = xstate.step(b, e);
    expect(view(a)).toEqual(view(b));
  }
}

describe('compileMachine: the machines as plain step functions', () => {
  it('steps presences exactly as xstate does (value, context, status after every event)', () => {
    const input = { channelId: 'c', avatarId: 'a', settings, at: 0 };
    fc.assert(
      fc.property(timeline(presenceEvent), (events) => expectSameSteps(avatarPresenceMachine, input, events)),
      { numRuns: 400 },
    );
  });

  it('steps threads exactly as xstate does', () => {
    fc.assert(
      fc.property(
        fc.record({
          participants: fc.constantFrom(['a', 'b'], ['a', 'b', 'c']).map((p) => [...p]),
          maxTurns: fc.integer({ min: 1, max: 6 }),
          extendOnActivity: fc.boolean(),
        }),
        timeline(threadEvent),
        (opts, events) => {
          const input = {
            id: 'th',
            channelId: 'c',
            mode: 'mention' as const,
            ttlMs: 1_000,
            quietMs: 300,
            at: 0,
            ...opts,
          };
          expectSameSteps(conversationThreadMachine, input, events);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('never mutates the state it is given, and shares one value object per configuration', () => {
    const compiled = compileMachine(avatarPresenceMachine);
    const s0 = compiled.initial({ channelId: 'c', avatarId: 'a', settings, at: 0 });
    const frozen = JSON.stringify(view(s0));
    const s1 = compiled.step(s0, { type: 'presence.claim', at: 1, turnId: 't', rung: 'summon' });
    const s2 = compiled.step(s1, { type: 'presence.delivered', at: 2, turnId: 't' });
    expect(JSON.stringify(view(s0))).toBe(frozen);
    expect(s2.value).toBe(s0.value);
    expect(compiled.step(s2, { type: 'presence.generated', at: 3, turnId: 'other' })).toBe(s2);
  });

  it('refuses what it cannot run faithfully, with a message saying what to use instead', () => {
    const withEntry = createMachine({ initial: 'a', states: { a: { entry: assign({}) } } });
    expect(() => compileMachine(withEntry)).toThrow(/entry\/exit actions at .*createMachineStepper/);
    const withDelay = createMachine({ initial: 'a', states: { a: { after: { 10: 'b' } }, b: {} } });
    expect(() => compileMachine(withDelay)).toThrow(/delayed transitions/);
    const withRaise = setup({}).createMachine({
      initial: 'a',
      states: { a: { on: { GO: { actions: () => {} } } } },
    });
    expect(() => compileMachine(withRaise)).toThrow(/action/);
  });
});
