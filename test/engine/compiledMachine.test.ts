import { readdirSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AnyStateMachine,
  and,
  assign,
  createMachine,
  type EventFromLogic,
  type InputFrom,
  not,
  or,
  StateMachine,
  setup,
  stateIn,
} from 'xstate';
import { compileMachine } from '../../src/engine/compiledMachine.js';
import { createMachineStepper } from '../../src/engine/machineStepper.js';
import {
  type AvatarPresenceEvent,
  avatarPresenceMachine,
  type PresenceSettings,
} from '../../src/machines/avatarPresence.machine.js';
import {
  type ConversationThreadEvent,
  conversationThreadMachine,
} from '../../src/machines/conversationThread.machine.js';
import { TroupeError } from '../../src/ports/troupeError.js';
import { fuzzRuns } from '../support/fuzzRuns.js';

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
      { numRuns: fuzzRuns(400) },
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
            extensionMs: 500,
            at: 0,
            ...opts,
          };
          expectSameSteps(conversationThreadMachine, input, events);
        },
      ),
      { numRuns: fuzzRuns(400) },
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

  it('runs assigns as xstate does: a property map reads the context before it; the next assign sees it after', () => {
    const machine = createMachine({
      types: {} as { context: { a: number; b: number; c: number; log: string } },
      context: { a: 1, b: 2, c: 0, log: '' },
      initial: 'idle',
      states: {
        idle: {
          on: {
            GO: {
              target: 'done',
              actions: [
                // A swap: both values come from the context as it was before this assign.
                assign({ a: ({ context }) => context.b, b: ({ context }) => context.a }),
                assign({ c: ({ context }) => context.a * 10 + context.b }),
                assign(({ context }) => ({ log: `${context.a}${context.b}${context.c}` })),
                assign({ log: ({ context }) => `${context.log}!` }),
              ],
            },
          },
        },
        done: {},
      },
    });
    const compiled = compileMachine(machine);
    const s0 = compiled.initial(undefined as never);
    const after = compiled.step(s0, { type: 'GO' });
    const reference = createMachineStepper(machine);
    const expected = reference.step(reference.initial(undefined as never), { type: 'GO' });
    expect(view(after)).toEqual(view(expected));
    expect(after.context).toEqual({ a: 2, b: 1, c: 21, log: '2121!' });
    expect(s0.context).toEqual({ a: 1, b: 2, c: 0, log: '' });
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

/** The error compiling `machine` throws (failing the test when it compiles). */
function refusal(machine: AnyStateMachine): TroupeError {
  try {
    compileMachine(machine);
  } catch (error) {
    if (TroupeError.isInstance(error)) return error;
    throw error;
  }
  throw new Error(`machine "${machine.id}" compiled, but should have been refused`);
}

describe('compileMachine refuses what it would run differently from xstate', () => {
  const ready = ({ context }: { context: { n: number } }) => context.n > 0;
  const busy = ({ context }: { context: { n: number } }) => context.n > 5;
  /** A machine that reads as one transition on GO from "idle", with the given guard and actions. */
  const withTransition = (id: string, go: Record<string, unknown>, guards: Record<string, unknown> = {}) =>
    setup({
      types: { context: {} as { n: number }, events: {} as { type: 'GO' } },
      guards: { ready, busy, ...guards } as never,
      actions: {
        setN: assign((_, params: { n: number }) => ({ n: params.n })),
        bump: assign({ n: ({ context }) => context.n + 1 }),
      },
    }).createMachine({
      id,
      context: { n: 1 },
      initial: 'idle',
      states: { idle: { on: { GO: { target: 'done', ...go } as never } }, done: {} },
    });

  const cases: [string, AnyStateMachine, RegExp][] = [
    [
      'a guard with params',
      withTransition('guardParams', { guard: { type: 'ready', params: { min: 3 } } }),
      /guard "ready" with params .*inside the guard/,
    ],
    [
      'an assign with params',
      withTransition('assignParams', { actions: { type: 'setN', params: { n: 3 } } }),
      /action "setN" \(an assign\) with params .*inside the assign/,
    ],
    [
      'an inline not()',
      withTransition('inlineNot', { guard: not('ready') }),
      /inline guard made with not\(\)/,
    ],
    ['an inline and()', withTransition('inlineAnd', { guard: and(['ready', 'busy']) }), /made with and\(\)/],
    ['an inline or()', withTransition('inlineOr', { guard: or(['ready', 'busy']) }), /made with or\(\)/],
    [
      'a named guard implemented with not()',
      withTransition('namedNot', { guard: 'idleNow' }, { idleNow: not('busy') }),
      /guard "idleNow" made with not\(\) .*one named guard that combines the checks/,
    ],
    [
      'stateIn()',
      withTransition('inState', { guard: stateIn('#inState.idle') }),
      /made with stateIn\(\) .*test the context or event instead of the active state/,
    ],
  ];
  it.each(cases)('%s', (_, machine, advice) => {
    const error = refusal(machine);
    expect(error.code).toBe('TROUPE_MACHINE_UNSUPPORTED');
    // Names the machine, the state and the transition, and says what to do.
    expect(error.message).toContain(`machine "${machine.id}"`);
    expect(error.message).toContain(`state "${machine.id}.idle", on "GO"`);
    expect(error.message).toMatch(advice);
    expect(error.message).toMatch(/createMachineStepper/);
    expect(error.details).toEqual({ machine: machine.id, state: `${machine.id}.idle`, event: 'GO' });
  });

  it('compiles the same transition without params or combinators (the refusals are not blanket)', () => {
    const plain = withTransition('plain', { guard: 'ready', actions: ['bump'] });
    const compiled = compileMachine(plain);
    const after = compiled.step(compiled.initial(undefined as never), { type: 'GO' });
    expect(view(after)).toEqual({ value: 'done', context: { n: 2 }, status: 'active' });
  });

  it('refuses wildcard events, actions on an initial transition, and eventless combinators', () => {
    const wildcard = createMachine({ id: 'wild', initial: 'a', states: { a: { on: { '*': 'b' } }, b: {} } });
    expect(refusal(wildcard).message).toMatch(/a wildcard event descriptor at state "wild.a", on "\*"/);
    const initialActions = createMachine({
      id: 'init',
      context: { n: 0 },
      initial: { target: 'a', actions: assign({ n: 1 }) },
      states: { a: {} },
    });
    expect(refusal(initialActions).message).toMatch(/actions on its initial transition at state "init"/);
    const eventless = createMachine({
      id: 'eventless',
      initial: 'a',
      states: { a: { always: { guard: not(() => true), target: 'b' } }, b: {} },
    });
    expect(refusal(eventless).message).toMatch(
      /made with not\(\) at state "eventless.a", eventless transition/,
    );
  });
});

describe('every shipped machine compiles', () => {
  it('src/machines/*.machine.ts', async () => {
    const dir = new URL('../../src/machines/', import.meta.url);
    const files = readdirSync(dir).filter((f) => f.endsWith('.machine.ts'));
    const machines: AnyStateMachine[] = [];
    for (const file of files) {
      const module = (await import(new URL(file, dir).href)) as Record<string, unknown>;
      for (const value of Object.values(module)) if (value instanceof StateMachine) machines.push(value);
    }
    expect(machines.map((m) => m.id).sort()).toEqual(
      expect.arrayContaining(['avatarPresence', 'conversationThread', 'pendingChoice']),
    );
    for (const machine of machines) expect(() => compileMachine(machine)).not.toThrow();
  });
});
