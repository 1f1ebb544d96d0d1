import { describe, expect, it } from 'vitest';
import type { EmailRecord } from '../../src/actors/email/emailRecord.js';
import type { InspectionEvent } from '../../src/actors/inspectionEvent.js';
import type { FloorView } from '../../src/floor/channelFloor.js';
import type { FloorEffect } from '../../src/floor/floorTypes.js';
import { stateValueText } from '../../src/inspect/stateValueText.js';
import { activeStateIds } from '../../src/studio/chartStateIds.js';
import { emailActorId, eventLine, presenceActorId, threadActorId } from '../../src/studio/eventSummary.js';
import {
  STUDIO_LIMITS,
  type StudioActor,
  type StudioCapReached,
  type StudioState,
} from '../../src/studio/studioState.js';
import { createStudioStore, emptyStudioState, playgroundKey } from '../../src/studio/studioStore.js';
import { seededRandom } from '../support/seededRandom.js';

// ---------------------------------------------------------------------------------------------
// The reference: the store's actor reducers as they were before the index (commit 01d0164), each
// walking the whole list, plus the one rule added since (a stopped channel's presences are done).
// ---------------------------------------------------------------------------------------------

const FINISHED_EMAIL = new Set(['done', 'invalid', 'failed']);
const CLASSIFIED: Record<string, string> = { ignore: 'ignored', notify: 'notified', respond: 'responded' };

function capReached(list: readonly StudioCapReached[], reached: StudioCapReached): StudioCapReached[] {
  const same = (c: StudioCapReached) =>
    c.avatarId === reached.avatarId &&
    c.channelKey === reached.channelKey &&
    c.reason === reached.reason &&
    c.notice === reached.notice;
  return [...list.filter((c) => !same(c)), reached].slice(-STUDIO_LIMITS.capsReached);
}

function usageAfter(usage: StudioState['usage'], event: InspectionEvent): StudioState['usage'] {
  if (event.type !== 'floor.effect') return usage;
  const { effect, channelKey } = event;
  const notice = effect.type === 'cap.notice';
  if (!notice && !(effect.type === 'candidate.suppressed' && effect.reason.startsWith('cap-'))) return usage;
  const reached: StudioCapReached = {
    at: effect.at,
    avatarId: effect.avatarId,
    channelKey,
    reason: effect.reason,
    detail: effect.detail ?? '',
    notice,
  };
  return { ...usage, capsReached: capReached(usage.capsReached, reached) };
}

function bounded(actors: StudioActor[]): StudioActor[] {
  const finished = actors.filter((a) => a.status === 'done');
  if (finished.length <= STUDIO_LIMITS.finishedActors) return actors;
  const keep = new Set(
    finished
      .sort((a, b) => b.updatedAt - a.updatedAt)
      .slice(0, STUDIO_LIMITS.finishedActors)
      .map((a) => a.id),
  );
  return actors.filter((a) => a.status === 'active' || keep.has(a.id));
}

function upsert(actors: readonly StudioActor[], actor: StudioActor): StudioActor[] {
  const i = actors.findIndex((a) => a.id === actor.id);
  if (i < 0) return [...actors, actor];
  const next = [...actors];
  next[i] = actor;
  return next;
}

function withValue(actor: Omit<StudioActor, 'stateIds'>): StudioActor {
  return { ...actor, stateIds: activeStateIds(actor.machine, actor.value) };
}

function bump(counters: Record<string, number>, name: string, by = 1): Record<string, number> {
  return { ...counters, [name]: (counters[name] ?? 0) + by };
}

function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value ?? null)) as T;
}

function oldInspected(
  state: StudioState,
  event: InspectionEvent,
  name: (id: string) => string,
): Omit<StudioState, 'version'> {
  const last = state.events.at(-1)?.seq ?? 0;
  const events = [...state.events, { seq: last + 1, ...eventLine(event, name) }].slice(-STUDIO_LIMITS.events);
  let { actors, counters } = state;
  const usage = usageAfter(state.usage, event);
  if (event.type === 'turn.generated') counters = bump(counters, 'turnsGenerated');
  if (event.type === 'turn.generation-failed') counters = bump(counters, 'turnsFailed');
  if (event.type === 'response.prepared') counters = bump(counters, 'responsesPrepared');
  if (event.type === 'floor.effect') {
    const { effect, channelKey } = event;
    if (effect.type === 'candidate.suppressed') counters = bump(counters, 'suppressed');
    if (effect.type === 'presence.summoned') counters = bump(counters, 'summoned');
    if (effect.type === 'thread.opened') {
      counters = bump(counters, 'threadsOpened');
      actors = upsert(
        actors,
        withValue({
          id: threadActorId(effect.threadId),
          kind: 'thread',
          machine: 'conversationThread',
          label: `thread ${effect.threadId.slice(effect.threadId.lastIndexOf(':') + 1)} (${effect.participants.map(name).join(', ')})`,
          channelKey,
          status: 'active',
          value: 'active',
          context: {
            mode: effect.mode,
            participants: [...effect.participants],
            turnCount: 0,
            maxTurns: effect.maxTurns,
            expiresAt: effect.expiresAt,
          },
          updatedAt: effect.at,
        }),
      );
    }
    if (effect.type === 'thread.ended') {
      const outcome = effect.outcome;
      counters = bump(counters, `threads${outcome.charAt(0).toUpperCase()}${outcome.slice(1)}`);
      const id = threadActorId(effect.threadId);
      const before = actors.find((a) => a.id === id);
      actors = upsert(
        actors,
        withValue({
          id,
          kind: 'thread',
          machine: 'conversationThread',
          label: before?.label ?? `thread ${effect.threadId}`,
          channelKey,
          status: 'done',
          value: outcome,
          context: {
            ...(before?.context ?? {}),
            turnCount: effect.turns,
            outcome,
            detail: effect.detail,
            ...(effect.sentiment !== undefined ? { sentiment: effect.sentiment } : {}),
          },
          updatedAt: effect.at,
        }),
      );
    }
    if (effect.type === 'presence.dismissed') {
      const id = presenceActorId(channelKey, effect.avatarId);
      const before = actors.find((a) => a.id === id);
      if (before)
        actors = upsert(
          actors,
          withValue({ ...before, status: 'done', value: 'dismissed', updatedAt: effect.at }),
        );
    }
  }
  return { ...state, now: Math.max(state.now, event.at), events, actors: bounded(actors), counters, usage };
}

/** The rule added with the index, written the old way: a stopped channel's presences are done. */
function oldStopped(state: Omit<StudioState, 'version'>, event: InspectionEvent, playground: string) {
  if (event.type !== 'actor.stopped' || event.channelKey === playground) return state;
  const actors = state.actors.map((a) =>
    a.kind === 'presence' && a.channelKey === event.channelKey && a.status === 'active'
      ? { ...a, status: 'done' as const, updatedAt: event.at }
      : a,
  );
  return { ...state, actors: bounded(actors) };
}

function oldFloorViewed(
  state: StudioState,
  channelKey: string,
  view: FloorView,
  name: (id: string) => string,
) {
  let actors = [...state.actors];
  const present = new Set<string>();
  for (const p of view.present) {
    const { state: value, ...context } = p;
    const id = presenceActorId(channelKey, p.id);
    present.add(id);
    actors = upsert(
      actors,
      withValue({
        id,
        kind: 'presence',
        machine: 'avatarPresence',
        label: `${p.name} in ${channelKey}`,
        channelKey,
        status: 'active',
        value: plain(value),
        context: plain(context),
        updatedAt: view.now,
      }),
    );
  }
  actors = actors.map((a) =>
    a.kind === 'presence' && a.channelKey === channelKey && a.status === 'active' && !present.has(a.id)
      ? withValue({ ...a, status: 'done', value: 'dismissed', updatedAt: view.now })
      : a,
  );
  for (const t of view.threads) {
    const { state: value, status, ...context } = t;
    actors = upsert(
      actors,
      withValue({
        id: threadActorId(t.id),
        kind: 'thread',
        machine: 'conversationThread',
        label: `thread ${t.id.slice(t.id.lastIndexOf(':') + 1)} (${t.participants.map(name).join(', ')})`,
        channelKey,
        status: status === 'active' ? 'active' : 'done',
        value: plain(value),
        context: plain(context),
        updatedAt: view.now,
      }),
    );
  }
  const here = new Set(view.present.map((p) => p.id));
  const playground =
    channelKey === playgroundKey(state)
      ? {
          ...state.playground,
          avatars: state.playground.avatars.map((a) => ({ ...a, present: here.has(a.id) })),
        }
      : state.playground;
  return { ...state, now: Math.max(state.now, view.now), actors: bounded(actors), playground };
}

function oldEmailChanged(state: StudioState, record: EmailRecord) {
  const id = emailActorId(record.email.id);
  const before = state.actors.find((a) => a.id === id);
  let { counters } = state;
  if (!before) counters = bump(counters, 'emailsReceived');
  const classification = record.decision?.classification;
  if (classification && before?.context.classification === undefined)
    counters = bump(counters, CLASSIFIED[classification] ?? classification);
  const value = plain(record.state.value);
  const at = record.state.context.now;
  const actor = withValue({
    id,
    kind: 'email',
    machine: 'emailLifecycle',
    label: record.email.subject || `(no subject) from ${record.email.from}`,
    status: FINISHED_EMAIL.has(String(value)) ? 'done' : 'active',
    value,
    context: plain({
      emailId: record.email.id,
      from: record.email.from,
      subject: record.email.subject,
      ...(classification ? { classification, reasoning: record.decision?.reasoning } : {}),
      ...(record.decision?.profileVersion !== undefined
        ? { profileVersion: record.decision.profileVersion }
        : {}),
      ...(record.interruptId ? { interruptId: record.interruptId } : {}),
      ...(record.proposed ? { proposed: record.proposed } : {}),
      steps: record.steps.map((s) => s.call.tool),
      lifecycle: record.state.context,
    }),
    updatedAt: at,
  });
  const last = state.events.at(-1)?.seq ?? 0;
  const line = {
    seq: last + 1,
    at,
    actorId: id,
    type: 'email.changed',
    summary: `“${record.email.subject}” is ${stateValueText(value)}`,
  };
  const latest = state.answered.findIndex((a) => a.emailId === record.email.id);
  const answered = state.answered.map((a, i) => (i === latest ? { ...a, emailState: value } : a));
  return {
    ...state,
    actors: bounded(upsert(state.actors, actor)),
    counters,
    answered,
    events: [...state.events, line].slice(-STUDIO_LIMITS.events),
  };
}

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

type Step =
  | { type: 'inspected'; event: InspectionEvent }
  | { type: 'floorViewed'; channelKey: string; view: FloorView }
  | { type: 'emailChanged'; record: EmailRecord };

const PLAYGROUND = { platform: 'test', id: 'c0' };
const names = new Map([
  ['a0', 'Ada'],
  ['a1', 'Bo'],
]);
const name = (id: string) => names.get(id) ?? id;

function reference(state: StudioState, step: Step): StudioState {
  const changed =
    step.type === 'inspected'
      ? oldStopped(oldInspected(state, step.event, name), step.event, playgroundKey(state))
      : step.type === 'floorViewed'
        ? oldFloorViewed(state, step.channelKey, step.view, name)
        : oldEmailChanged(state, step.record);
  return { ...changed, version: state.version + 1 };
}

const PRESENCE_VALUES = [
  { present: { mode: 'ambient', turn: 'ready' } },
  { present: { mode: 'conversing', turn: 'claimed' } },
  'absent',
];

function floorView(channelKey: string, now: number, present: string[], threads: FloorView['threads'] = []) {
  return {
    channelId: channelKey.slice(channelKey.indexOf(':') + 1),
    now,
    present: present.map((id, i) => ({
      id,
      name: name(id),
      summonTurns: i,
      conversing: i % 2 === 0,
      conversingUntil: now + i,
      cooldownUntil: 0,
      lastSpokeAt: i === 0 ? null : now - 1,
      turn: 'ready' as const,
      state: PRESENCE_VALUES[i % PRESENCE_VALUES.length] as FloorView['present'][number]['state'],
    })),
    threads,
    inFlight: [],
    budget: { main: 0, cascade: 0 },
    pendingFollowUps: [],
  } satisfies FloorView;
}

const effectStep = (channelKey: string, effect: FloorEffect): Step => ({
  type: 'inspected',
  event: { type: 'floor.effect', at: effect.at, channelKey, effect },
});

const opened = (threadId: string, at: number, participants = ['a0', 'a1']): FloorEffect => ({
  type: 'thread.opened',
  at,
  threadId,
  mode: 'mention',
  participants,
  maxTurns: 4,
  expiresAt: at + 100,
});

const ended = (threadId: string, at: number, outcome: 'expired' | 'concluded' = 'expired'): FloorEffect => ({
  type: 'thread.ended',
  at,
  threadId,
  outcome,
  detail: outcome,
  turns: 2,
});

const random = seededRandom;

const EMAIL_VALUES = ['received', 'triaging', 'notifying', 'done', 'failed', 'invalid'];

function emailRecord(id: string, value: string, now: number, classify: boolean): EmailRecord {
  return {
    email: { id, subject: id === 'e0' ? '' : `Subject ${id}`, from: 'x@example.com' },
    state: { value, context: { now } },
    ...(classify ? { decision: { classification: 'notify', reasoning: 'because' } } : {}),
    steps: [],
  } as unknown as EmailRecord;
}

/** One step of a random run: mostly floor effects and views over few channels, so ids recur. */
function randomStep(rng: () => number, now: number): Step {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rng() * list.length)] as T;
  const channel = `test:c${Math.floor(rng() * 12)}`;
  const avatar = `a${Math.floor(rng() * 8)}`;
  const thread = `${channel}:th${Math.floor(rng() * 40)}`;
  const at = now - Math.floor(rng() * 3);
  const r = rng();
  if (r < 0.22) {
    const present = ['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7'].filter(() => rng() < 0.4);
    const threads = [0, 1]
      .filter(() => rng() < 0.3)
      .map((i) => ({
        id: `${channel}:th${Math.floor(rng() * 40)}`,
        mode: 'mention' as const,
        participants: ['a0', avatar],
        turnCount: i,
        maxTurns: 4,
        expiresAt: at + 50,
        status: pick(['active', 'active', 'expired'] as const),
        state: 'active',
      }));
    return { type: 'floorViewed', channelKey: channel, view: floorView(channel, at, present, threads) };
  }
  if (r < 0.37) return effectStep(channel, opened(thread, at, ['a0', avatar]));
  if (r < 0.53) return effectStep(channel, ended(thread, at, pick(['expired', 'concluded'] as const)));
  if (r < 0.6) return effectStep(channel, { type: 'presence.dismissed', at, avatarId: avatar });
  if (r < 0.66) {
    const reason = pick(['passivated', 'finished', 'conflict', 'runtime-stopped'] as const);
    return { type: 'inspected', event: { type: 'actor.stopped', at, channelKey: channel, reason } };
  }
  if (r < 0.7)
    return effectStep(channel, {
      type: 'candidate.suppressed',
      at,
      avatarId: avatar,
      messageId: 'm',
      reason: pick(['busy', 'cap-avatar-tokens'] as const),
    });
  if (r < 0.74)
    return effectStep(channel, { type: 'presence.summoned', at, avatarId: avatar, turnsGranted: 2 });
  if (r < 0.8) return { type: 'inspected', event: { type: 'actor.activated', at, channelKey: channel } };
  if (r < 0.86)
    return {
      type: 'inspected',
      event: {
        type: 'turn.generated',
        at,
        channelKey: channel,
        turnId: 't',
        avatarId: avatar,
        model: 'm',
        chars: 3,
      },
    };
  const email = `e${Math.floor(rng() * 30)}`;
  return { type: 'emailChanged', record: emailRecord(email, pick(EMAIL_VALUES), at, rng() < 0.5) };
}

function newStore() {
  return createStudioStore({
    now: 0,
    avatarNames: names,
    playground: { channel: PLAYGROUND, avatars: [{ id: 'a0', name: 'Ada' }] },
  });
}

/** Each actor and event line as JSON, made once (they are never changed in place). */
const strings = new WeakMap<object, string>();
function json(o: object): string {
  let text = strings.get(o);
  if (text === undefined) {
    text = JSON.stringify(o);
    strings.set(o, text);
  }
  return text;
}

/** The same JSON, the lists compared item by item through the strings made once. */
function sameState(a: StudioState, b: StudioState): boolean {
  const { actors, events, ...rest } = a;
  const { actors: otherActors, events: otherEvents, ...otherRest } = b;
  const same = <T extends object>(x: readonly T[], y: readonly T[]) =>
    x.length === y.length && x.every((item, i) => json(item) === json(y[i] as T));
  return (
    JSON.stringify(rest) === JSON.stringify(otherRest) &&
    same(actors, otherActors) &&
    same(events, otherEvents)
  );
}

const ids = (actors: readonly StudioActor[]) => actors.map((a) => a.id);

// ---------------------------------------------------------------------------------------------

describe('the studio store with many actors', () => {
  it('keeps every presence in place, and of the finished the latest 100 (the earlier listed first on a tie)', () => {
    const store = newStore();
    const channels = Array.from({ length: 1_000 }, (_, c) => `discord:c${c}`);
    for (const key of channels)
      store.send({ type: 'floorViewed', channelKey: key, view: floorView(key, 1, ['a0', 'a1', 'a2']) });
    const presences = channels.flatMap((key) => ['a0', 'a1', 'a2'].map((a) => presenceActorId(key, a)));
    expect(ids(store.getSnapshot().context.actors)).toEqual(presences);

    // 150 threads open in order, then end in a shuffled order, three at each time.
    const threads = Array.from({ length: 150 }, (_, i) => `discord:c1:th${i}`);
    for (const t of threads) store.send(effectStep('discord:c1', opened(t, 10)));
    const rng = random(7);
    const order = [...threads.keys()].sort(() => rng() - 0.5);
    for (const i of order)
      store.send(effectStep('discord:c1', ended(threads[i] as string, 100 + Math.floor(i / 3))));
    // Ranked by time, then by place: of the three ending at 116 (48, 49, 50) the 48th comes first.
    const kept = [48, ...Array.from({ length: 99 }, (_, k) => 51 + k)].map((i) =>
      threadActorId(threads[i] as string),
    );
    let state = store.getSnapshot().context;
    expect(ids(state.actors)).toEqual([...presences, ...kept]);
    expect(state.actors.filter((a) => a.status === 'done')).toHaveLength(STUDIO_LIMITS.finishedActors);

    // A view without two presences dismisses them; the two lowest ranked go (48, then 53 of 51-53).
    const before = state;
    const beforeJson = JSON.stringify(before.actors);
    store.send({ type: 'floorViewed', channelKey: 'discord:c5', view: floorView('discord:c5', 500, ['a1']) });
    state = store.getSnapshot().context;
    const gone = new Set([threadActorId('discord:c1:th48'), threadActorId('discord:c1:th53')]);
    expect(ids(state.actors)).toEqual([...presences, ...kept].filter((id) => !gone.has(id)));
    expect(state.actors.find((a) => a.id === presenceActorId('discord:c5', 'a0'))).toMatchObject({
      status: 'done',
      value: 'dismissed',
      updatedAt: 500,
    });
    // The state before keeps its own list.
    expect(JSON.stringify(before.actors)).toBe(beforeJson);
  });

  it('lists a stopped channel’s presences as done (not the playground’s), and its next view brings them back in place', () => {
    const store = newStore();
    const pg = playgroundKey(store.getSnapshot().context);
    for (const key of [pg, 'test:c1', 'test:c2'])
      store.send({ type: 'floorViewed', channelKey: key, view: floorView(key, 1, ['a0', 'a1']) });
    const all = ids(store.getSnapshot().context.actors);
    for (const channelKey of [pg, 'test:c1'])
      store.send({
        type: 'inspected',
        event: { type: 'actor.stopped', at: 5, channelKey, reason: 'passivated' },
      });
    const state = store.getSnapshot().context;
    expect(state.actors.map((a) => [a.id, a.status, a.updatedAt])).toEqual([
      [all[0], 'active', 1],
      [all[1], 'active', 1],
      [all[2], 'done', 5],
      [all[3], 'done', 5],
      [all[4], 'active', 1],
      [all[5], 'active', 1],
    ]);
    // The state it was in stays (it was not dismissed).
    expect(state.actors[2]?.value).toEqual(PRESENCE_VALUES[0]);
    expect(state.playground.avatars).toEqual([{ id: 'a0', name: 'Ada', present: true }]);
    store.send({ type: 'floorViewed', channelKey: 'test:c1', view: floorView('test:c1', 9, ['a0', 'a1']) });
    expect(store.getSnapshot().context.actors.map((a) => [a.id, a.status])).toEqual(
      all.map((id) => [id, 'active']),
    );
  });

  it('ends with the same state as the reducers walking the whole list, step by step, over seeded random runs', () => {
    for (const seed of [1, 2, 3]) {
      const rng = random(seed);
      const store = newStore();
      let expected: StudioState = emptyStudioState({
        now: 0,
        playground: { channel: PLAYGROUND, avatars: [{ id: 'a0', name: 'Ada' }] },
      });
      let pruned = 0;
      let mostDone = 0;
      for (let step = 0; step < 2_500; step += 1) {
        const next = randomStep(rng, 10 + Math.floor(step / 4));
        const listed = expected.actors.length;
        expected = reference(expected, next);
        store.send(next);
        const actual = store.getSnapshot().context;
        // Whole JSON now and then (an actor changed in place would escape the cached strings).
        const same =
          step % 50 === 0 ? JSON.stringify(actual) === JSON.stringify(expected) : sameState(actual, expected);
        if (!same) expect({ seed, step, actual }).toEqual({ seed, step, actual: expected });
        if (expected.actors.length < listed) pruned += 1;
        mostDone = Math.max(mostDone, expected.actors.filter((a) => a.status === 'done').length);
      }
      // The runs reached the limit (a floor view may make some active again by the end) and pruned often.
      expect(mostDone).toBe(STUDIO_LIMITS.finishedActors);
      expect(pruned).toBeGreaterThan(100);
    }
  });
});
