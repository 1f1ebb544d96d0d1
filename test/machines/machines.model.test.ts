/**
 * Model-based tests for the two floor machines, generated with `xstate/graph`.
 *
 * A test model walks each statechart with a few named event cases whose times are derived from the
 * snapshot's own context ("100 ms later", "exactly at the deadline"), so every deadline can be
 * reached. Snapshots are serialised with times made relative to `now` and data-only fields left
 * out; that key is a congruence for the event cases (the same key and the same case always lead to
 * the same key), so the explored graph is finite and small, and replaying a path's cases against a
 * live actor must walk through exactly the path's keys.
 *
 * Against the machine *definition* (walked from `machine.root`, never a hard-coded list) the tests
 * check that every state node is reached and that every transition — each guarded branch of each
 * event and each eventless `always` branch — is taken by some replayed path. Each replay also
 * asserts per-state invariants and a step oracle on the live actor's real snapshots.
 */

import { describe, expect, it } from 'vitest';
import { type AnyStateNode, initialTransition, type SnapshotFrom, transition } from 'xstate';
import { createTestModel, getSimplePaths } from 'xstate/graph';
import {
  type AvatarPresenceContext,
  type AvatarPresenceEvent,
  type AvatarPresenceInput,
  avatarPresenceMachine,
  guaranteedTurns,
} from '../../src/machines/avatarPresence.machine.js';
import {
  type ConversationThreadEvent,
  type ConversationThreadInput,
  conversationThreadMachine,
  threadDeadline,
} from '../../src/machines/conversationThread.machine.js';
import { allStateIds, allTransitionKeys, missing, recordingActor } from '../support/machineCoverage.js';

function nodesOf(snapshot: unknown): string[] {
  return (snapshot as { _nodes: AnyStateNode[] })._nodes.map((n) => n.id);
}

/** Tags an event with the name of the case that made it (the machines ignore the extra field). */
function named<E extends { type: string }>(name: string, event: E): E {
  return Object.assign(event, { case: name });
}
const caseOf = (event: object | undefined) => (event as { case?: string } | undefined)?.case ?? 'init';

/** The event of the same case, re-derived from the live actor's own snapshot. */
function sameCase<E extends object>(events: readonly E[], event: E): E {
  const live = events.find((e) => caseOf(e) === caseOf(event));
  if (!live) throw new Error(`event case ${caseOf(event)} is not offered in this state`);
  return live;
}

// ---------------------------------------------------------------------------------------------
// conversationThread
// ---------------------------------------------------------------------------------------------

type ThreadSnapshot = SnapshotFrom<typeof conversationThreadMachine>;

const threadInputs: Array<{ name: string; input: ConversationThreadInput }> = [
  {
    name: 'two-party thread that extends on activity',
    input: {
      id: 't1',
      channelId: 'c1',
      mode: 'mention',
      participants: ['a', 'b'],
      maxTurns: 3,
      ttlMs: 300,
      quietMs: 200,
      extendOnActivity: true,
      extensionMs: 150,
      at: 1_000,
    },
  },
  {
    name: 'three-party thread with a fixed deadline',
    input: {
      id: 't2',
      channelId: 'c1',
      mode: 'summon',
      participants: ['a', 'b', 'c'],
      maxTurns: 3,
      ttlMs: 400,
      quietMs: 200,
      extendOnActivity: false,
      extensionMs: 150,
      at: 5_000,
    },
  },
];

/** The thread's event cases, with times derived from the snapshot so deadlines are reachable. */
function threadEvents(snapshot: ThreadSnapshot): ConversationThreadEvent[] {
  const c = snapshot.context;
  const soon = c.now + 100;
  const deadline = threadDeadline(c);
  return [
    named('a addresses b', {
      type: 'thread.turn',
      at: soon,
      speakerId: 'a',
      addressed: ['b'],
      farewell: false,
    }),
    named('b addresses nobody', {
      type: 'thread.turn',
      at: soon,
      speakerId: 'b',
      addressed: [],
      farewell: false,
    }),
    named('a says goodbye', {
      type: 'thread.turn',
      at: soon,
      speakerId: 'a',
      addressed: ['b'],
      farewell: true,
    }),
    named('outsider d speaks', {
      type: 'thread.turn',
      at: soon,
      speakerId: 'd',
      addressed: ['a'],
      farewell: false,
    }),
    named('turn at the deadline', {
      type: 'thread.turn',
      at: deadline,
      speakerId: 'b',
      addressed: ['a'],
      farewell: false,
    }),
    named('d joins', { type: 'thread.join', at: c.now, avatarId: 'd' }),
    named('b leaves', { type: 'thread.leave', at: c.now, avatarId: 'b' }),
    named('tick soon', { type: 'thread.tick', at: soon }),
    named('tick at the deadline', { type: 'thread.tick', at: deadline }),
  ];
}

/** A congruence key: control state, data the guards read, deadlines relative to `now`. */
function threadKey(snapshot: ThreadSnapshot, event: object | undefined, previous?: ThreadSnapshot): string {
  const c = snapshot.context;
  return JSON.stringify({
    value: snapshot.value,
    participants: c.participants,
    departed: c.departed,
    turnCount: c.turnCount,
    expiresIn: c.expiresAt - c.now,
    quietIn: c.quietDeadline === null ? null : c.quietDeadline - c.now,
    lastSpeakerId: c.lastSpeakerId,
    detail: c.detail,
    via: caseOf(event),
    from: previous?.value ?? null,
  });
}

function checkThreadInvariants(s: ThreadSnapshot): void {
  const c = s.context;
  expect(c.turnCount).toBeGreaterThanOrEqual(0);
  expect(c.turnCount).toBeLessThanOrEqual(c.maxTurns);
  expect(new Set(c.participants).size).toBe(c.participants.length);
  for (const d of c.departed) expect(c.participants).toContain(d);
  expect(c.expiresAt).toBeGreaterThanOrEqual(c.startedAt + c.ttlMs);
  expect(c.now).toBeGreaterThanOrEqual(c.startedAt);
  if (s.matches('active')) {
    expect(s.status).toBe('active');
    expect(c.detail).toBeNull();
    expect(c.turnCount).toBeLessThan(c.maxTurns);
    expect(c.now).toBeLessThan(threadDeadline(c));
    expect(c.participants.filter((p) => !c.departed.includes(p)).length).toBeGreaterThanOrEqual(2);
  } else {
    expect(s.status).toBe('done');
    expect(c.detail).not.toBeNull();
  }
}

const threadStateChecks = {
  active: checkThreadInvariants,
  exhausted: (s: ThreadSnapshot) => {
    checkThreadInvariants(s);
    expect(s.context.turnCount).toBe(s.context.maxTurns);
    expect(s.context.detail).toBe(`turn limit of ${s.context.maxTurns} reached`);
  },
  expired: (s: ThreadSnapshot) => {
    checkThreadInvariants(s);
    expect(s.context.now).toBeGreaterThanOrEqual(s.context.expiresAt);
    expect(s.context.detail).toMatch(/^deadline passed after \d+ turns$/);
  },
  concluded: (s: ThreadSnapshot) => {
    checkThreadInvariants(s);
    expect(s.context.detail).toMatch(
      /^(participants said goodbye|nobody was addressed for \d+s|nobody was waiting for an answer when the deadline came)$/,
    );
  },
};

/** The step oracle: what one event must do to a thread. */
function checkThreadStep(
  before: ThreadSnapshot,
  event: ConversationThreadEvent,
  after: ThreadSnapshot,
): void {
  const b = before.context;
  const a = after.context;
  if (before.status !== 'active') {
    expect(after.value).toEqual(before.value);
    expect(a).toEqual(b);
    return;
  }
  expect(a.now).toBe(Math.max(b.now, event.at));
  expect(a.expiresAt).toBeGreaterThanOrEqual(b.expiresAt);
  if (event.type === 'thread.turn') {
    const inTime = event.at < threadDeadline(b);
    expect(a.turnCount).toBe(b.turnCount + (inTime ? 1 : 0));
    if (inTime) {
      expect(a.participants).toContain(event.speakerId);
      expect(a.lastSpeakerId).toBe(event.speakerId);
      expect(a.expiresAt).toBe(
        b.extendOnActivity ? Math.max(b.expiresAt, event.at + (b.extensionMs ?? b.ttlMs)) : b.expiresAt,
      );
    } else {
      expect(after.status).toBe('done');
      expect(a.lastSpeakerId).toBe(b.lastSpeakerId);
      expect(a.participants).toEqual(b.participants);
    }
  } else {
    expect(a.turnCount).toBe(b.turnCount);
    expect(a.expiresAt).toBe(b.expiresAt);
  }
  if (event.type === 'thread.join') expect(a.participants).toContain(event.avatarId);
}

const THREAD_EVENT_TYPES = ['thread.turn', 'thread.join', 'thread.leave', 'thread.tick'] as const;

describe('conversationThread model', () => {
  for (const { name, input } of threadInputs) {
    describe(name, () => {
      const model = createTestModel(conversationThreadMachine, {
        input,
        events: threadEvents,
        serializeState: threadKey,
      });
      const paths = model.getShortestPaths();

      it('generates a bounded set of paths that reaches every state node', () => {
        expect(paths.length).toBeGreaterThan(10);
        expect(paths.length).toBeLessThan(2_000);
        const reached = new Set(
          paths.flatMap((p) => [p.state, ...p.steps.map((s) => s.state)]).flatMap(nodesOf),
        );
        const expected = allStateIds(conversationThreadMachine);
        expect(expected).toEqual(
          expect.arrayContaining(
            ['active', 'expired', 'exhausted', 'concluded'].map((s) => `conversationThread.${s}`),
          ),
        );
        expect(missing(expected, reached), 'state nodes no path reaches').toEqual([]);
      });

      it('replays every path in a live actor: same states, every transition taken, invariants kept', async () => {
        const taken = new Set<string>();
        const visited = new Set<string>();
        for (const path of paths) {
          const actor = recordingActor(conversationThreadMachine, input, taken, visited);
          let previousStep = actor.getSnapshot() as ThreadSnapshot;
          const exec = (step: { event: ConversationThreadEvent; state: ThreadSnapshot }) => {
            const before = actor.getSnapshot() as ThreadSnapshot;
            const event = sameCase(threadEvents(before), step.event);
            actor.send(event);
            const after = actor.getSnapshot() as ThreadSnapshot;
            expect(threadKey(after, event, before)).toBe(threadKey(step.state, step.event, previousStep));
            previousStep = step.state;
            checkThreadInvariants(after);
            checkThreadStep(before, event, after);
          };
          await path.test({
            states: threadStateChecks,
            events: Object.fromEntries(THREAD_EVENT_TYPES.map((type) => [type, exec])),
          });
          actor.stop();
        }
        expect(missing(allStateIds(conversationThreadMachine), visited), 'state nodes never visited').toEqual(
          [],
        );
        expect(
          missing(allTransitionKeys(conversationThreadMachine), taken),
          'transitions never taken',
        ).toEqual([]);
      });
    });
  }
});

// ---------------------------------------------------------------------------------------------
// avatarPresence
// ---------------------------------------------------------------------------------------------

type PresenceSnapshot = SnapshotFrom<typeof avatarPresenceMachine>;

const presenceInput: AvatarPresenceInput = {
  channelId: 'c1',
  avatarId: 'ava',
  at: 10_000,
  settings: {
    perAvatarCooldownMs: 500,
    recentSummonCooldownMs: 100,
    stickyAffinityTtlMs: 300,
    attentionHalfLifeMs: 1_000,
    summonConversationDurationMs: 300,
  },
};

/** The presence's event cases; turn ids follow the delivered count, times follow `now`. */
function presenceEvents(snapshot: PresenceSnapshot): AvatarPresenceEvent[] {
  const c = snapshot.context;
  const soon = c.now + 100;
  const turnId = c.claim?.turnId ?? `turn-${c.delivered}`;
  return [
    named('summoned', { type: 'presence.summoned', at: soon, turns: 2 }),
    named('mentioned', { type: 'presence.mentioned', at: soon, by: 'u1', grantTurns: 1 }),
    named('addressed by u1', { type: 'presence.addressedBy', at: soon, userId: 'u1' }),
    named('claim summon', { type: 'presence.claim', at: soon, turnId, rung: 'summon' }),
    named('claim reply', { type: 'presence.claim', at: soon, turnId, rung: 'reply' }),
    named('claim follow-up', { type: 'presence.claim', at: soon, turnId, rung: 'follow-up' }),
    named('generated', { type: 'presence.generated', at: soon, turnId }),
    named('generated, other turn', { type: 'presence.generated', at: soon, turnId: 'someone-else' }),
    named('delivered', { type: 'presence.delivered', at: soon, turnId }),
    named('delivered, other turn', { type: 'presence.delivered', at: soon, turnId: 'someone-else' }),
    named('failed', { type: 'presence.failed', at: soon, turnId }),
    named('failed, other turn', { type: 'presence.failed', at: soon, turnId: 'someone-else' }),
    named('tick soon', { type: 'presence.tick', at: soon }),
    named('tick at conversation end', { type: 'presence.tick', at: Math.max(soon, c.conversingUntil) }),
    named('dismissed', { type: 'presence.dismissed', at: soon }),
  ];
}

/** A congruence key: control state, turns, the claim's rung, conversation time left. */
function presenceKey(
  snapshot: PresenceSnapshot,
  event: object | undefined,
  previous?: PresenceSnapshot,
): string {
  const c = snapshot.context;
  return JSON.stringify({
    value: snapshot.value,
    summonTurns: c.summonTurns,
    conversingFor: Math.max(0, c.conversingUntil - c.now),
    claim: c.claim?.rung ?? null,
    mentioned: c.lastMentionBy !== null,
    delivered: c.delivered,
    via: caseOf(event),
    from: previous?.value ?? null,
  });
}

function checkPresenceInvariants(s: PresenceSnapshot): void {
  const c = s.context;
  expect(c.summonTurns).toBeGreaterThanOrEqual(0);
  expect(c.delivered).toBeGreaterThanOrEqual(0);
  expect(c.attention.value).toBeGreaterThanOrEqual(0);
  expect(c.attention.value).toBeLessThanOrEqual(1);
  expect(c.attention.at).toBeLessThanOrEqual(c.now);
  const holdsTurn =
    s.matches({ present: { turn: 'claimed' } }) || s.matches({ present: { turn: 'generating' } });
  expect(c.claim !== null, 'a claim is held exactly in turn.claimed / turn.generating').toBe(holdsTurn);
  if (c.lastSpokeAt !== null) {
    expect(c.delivered).toBeGreaterThan(0);
    expect(c.cooldownUntil).toBeGreaterThan(c.lastSpokeAt);
  } else {
    expect(c.delivered).toBe(0);
  }
  if (s.matches('present')) {
    expect(s.status).toBe('active');
    expect(s.matches({ present: { mode: 'conversing' } })).toBe(c.now < c.conversingUntil);
  } else {
    expect(s.status).toBe('done');
  }
}

const presenceStateChecks = {
  '#avatarPresence.present.mode.ambient': (s: PresenceSnapshot) => {
    checkPresenceInvariants(s);
    expect(s.context.now).toBeGreaterThanOrEqual(s.context.conversingUntil);
  },
  '#avatarPresence.present.mode.conversing': (s: PresenceSnapshot) => {
    checkPresenceInvariants(s);
    expect(s.context.now).toBeLessThan(s.context.conversingUntil);
    expect(s.context.grantedAt).not.toBeNull();
  },
  '#avatarPresence.present.turn.ready': (s: PresenceSnapshot) => {
    checkPresenceInvariants(s);
    expect(s.context.claim).toBeNull();
  },
  '#avatarPresence.present.turn.claimed': checkPresenceInvariants,
  '#avatarPresence.present.turn.generating': checkPresenceInvariants,
  '#avatarPresence.dismissed': (s: PresenceSnapshot) => {
    checkPresenceInvariants(s);
    expect(s.context.claim).toBeNull();
  },
};

const SPENDS = new Set(['summon', 'follow-up']);

/** Whether delivering a claim at this rung spends a guaranteed turn (seed 003: every turn while conversing). */
function spendsTurn(b: AvatarPresenceContext, rung: string, at: number): boolean {
  return guaranteedTurns(b, at) > 0 && (SPENDS.has(rung) || (at < b.conversingUntil && rung !== 'greeting'));
}

/** The step oracle: what one event must do to a presence. */
function checkPresenceStep(
  before: PresenceSnapshot,
  event: AvatarPresenceEvent,
  after: PresenceSnapshot,
): void {
  const b = before.context;
  const a = after.context;
  const unchanged = () => {
    expect(after.value).toEqual(before.value);
    expect(a).toEqual(b);
  };
  if (before.status !== 'active') {
    unchanged();
    return;
  }
  const current = b.claim !== null && 'turnId' in event && event.turnId === b.claim.turnId;
  switch (event.type) {
    case 'presence.delivered':
      if (!current || !b.claim) {
        unchanged();
        return;
      }
      expect(a.summonTurns).toBe(
        guaranteedTurns(b, event.at) - (spendsTurn(b, b.claim.rung, event.at) ? 1 : 0),
      );
      expect(a.delivered).toBe(b.delivered + 1);
      expect(a.lastSpokeAt).toBe(event.at);
      expect(a.cooldownUntil).toBe(
        event.at +
          (event.at < b.conversingUntil ? b.settings.recentSummonCooldownMs : b.settings.perAvatarCooldownMs),
      );
      break;
    case 'presence.generated':
    case 'presence.failed':
      if (!current) {
        unchanged();
        return;
      }
      expect(a.summonTurns).toBe(b.summonTurns);
      expect(a.delivered).toBe(b.delivered);
      expect(a.cooldownUntil).toBe(b.cooldownUntil);
      expect(a.lastSpokeAt).toBe(b.lastSpokeAt);
      break;
    case 'presence.claim':
      if (b.claim !== null) {
        // busy
        unchanged();
        return;
      }
      expect(a.claim).toEqual({ turnId: event.turnId, rung: event.rung, claimedAt: event.at });
      break;
    case 'presence.mentioned':
      expect(a.summonTurns).toBe(
        guaranteedTurns(b, event.at) > 0 ? guaranteedTurns(b, event.at) : event.grantTurns,
      );
      expect(a.lastMentionBy).toBe(event.by);
      expect(a.lastMentionAt).toBe(event.at);
      break;
    case 'presence.summoned':
      expect(a.summonTurns).toBe(Math.max(guaranteedTurns(b, event.at), event.turns));
      expect(a.conversingUntil).toBe(
        Math.max(b.conversingUntil, event.at + b.settings.summonConversationDurationMs),
      );
      break;
    case 'presence.dismissed':
      expect(after.status).toBe('done');
      expect(a.summonTurns).toBe(b.summonTurns);
      break;
    default:
      expect(a.summonTurns).toBe(b.summonTurns);
      expect(a.claim).toEqual(b.claim);
  }
}

const PRESENCE_EVENT_TYPES = [
  'presence.summoned',
  'presence.mentioned',
  'presence.addressedBy',
  'presence.claim',
  'presence.generated',
  'presence.delivered',
  'presence.failed',
  'presence.tick',
  'presence.dismissed',
] as const;

describe('avatarPresence model', () => {
  const model = createTestModel(avatarPresenceMachine, {
    input: presenceInput,
    events: presenceEvents,
    serializeState: presenceKey,
    // Two deliveries are enough to see a turn spent, a cooldown set and a claim taken again.
    stopWhen: (s) => s.context.delivered >= 2,
  });
  const paths = model.getShortestPaths();

  it('generates a bounded set of paths that reaches every state node', () => {
    expect(paths.length).toBeGreaterThan(10);
    expect(paths.length).toBeLessThan(5_000);
    const reached = new Set(paths.flatMap((p) => [p.state, ...p.steps.map((s) => s.state)]).flatMap(nodesOf));
    const expected = allStateIds(avatarPresenceMachine);
    expect(expected).toEqual(expect.arrayContaining(Object.keys(presenceStateChecks).map((k) => k.slice(1))));
    expect(missing(expected, reached), 'state nodes no path reaches').toEqual([]);
  });

  it('replays every path in a live actor: same states, every transition taken, invariants kept', async () => {
    const taken = new Set<string>();
    const visited = new Set<string>();
    for (const path of paths) {
      const actor = recordingActor(avatarPresenceMachine, presenceInput, taken, visited);
      let previousStep = actor.getSnapshot() as PresenceSnapshot;
      const exec = (step: { event: AvatarPresenceEvent; state: PresenceSnapshot }) => {
        const before = actor.getSnapshot() as PresenceSnapshot;
        const event = sameCase(presenceEvents(before), step.event);
        actor.send(event);
        const after = actor.getSnapshot() as PresenceSnapshot;
        expect(presenceKey(after, event, before)).toBe(presenceKey(step.state, step.event, previousStep));
        previousStep = step.state;
        checkPresenceInvariants(after);
        checkPresenceStep(before, event, after);
      };
      await path.test({
        states: presenceStateChecks,
        events: Object.fromEntries(PRESENCE_EVENT_TYPES.map((type) => [type, exec])),
      });
      actor.stop();
    }
    expect(missing(allStateIds(avatarPresenceMachine), visited), 'state nodes never visited').toEqual([]);
    expect(missing(allTransitionKeys(avatarPresenceMachine), taken), 'transitions never taken').toEqual([]);
  });

  it('enumerates every simple path of the turn lifecycle of a summoned presence', () => {
    // Only the turn region's events: however a summoned avatar's turns go, each delivery while its
    // conversation is live (a summon, follow-up or reply claim) spends exactly one of the two
    // granted turns until none are left, a failure or a stray turn id spends nothing, nothing goes
    // negative.
    const lifecycleCases = new Set([
      'claim summon',
      'claim follow-up',
      'claim reply',
      'generated',
      'delivered',
      'delivered, other turn',
      'failed',
    ]);
    const [initial] = initialTransition(avatarPresenceMachine, presenceInput);
    const [summoned] = transition(avatarPresenceMachine, initial, {
      type: 'presence.summoned',
      at: presenceInput.at + 1,
      turns: 2,
    });
    const lifecycle = getSimplePaths(avatarPresenceMachine, {
      fromState: summoned,
      events: (s) => presenceEvents(s).filter((e) => lifecycleCases.has(caseOf(e))),
      serializeState: (s) => presenceKey(s, undefined),
      stopWhen: (s) => s.context.delivered >= 2,
    });
    expect(lifecycle.length).toBeGreaterThan(5);
    expect(lifecycle.length).toBeLessThan(5_000);
    expect(lifecycle.some((p) => p.state.context.summonTurns === 0 && p.state.context.delivered === 2)).toBe(
      true,
    );
    for (const path of lifecycle) {
      // Steps are [state, the event that led to it]; the claim being delivered is the previous state's.
      let spent = 0;
      let previous = summoned;
      for (const step of path.steps) {
        const claim = previous.context.claim;
        if (
          step.event.type === 'presence.delivered' &&
          claim?.turnId === step.event.turnId &&
          spendsTurn(previous.context, claim.rung, step.event.at)
        ) {
          spent++;
        }
        // The summon's turns expire with its conversation.
        const at = step.event.at;
        const over = at >= step.state.context.conversingUntil;
        expect(guaranteedTurns(step.state.context, at)).toBe(over ? 0 : Math.max(0, 2 - spent));
        previous = step.state;
      }
    }
  });
});
