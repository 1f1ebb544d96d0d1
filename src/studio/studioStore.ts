import { createStore } from '@xstate/store';
import type { StateValue } from 'xstate';
import type { EmailRecord, InboxItem } from '../actors/email/emailRecord.js';
import type { InspectionEvent } from '../actors/inspectionEvent.js';
import { emptyTotals } from '../actors/usage/usageTotals.js';
import type { FloorView } from '../floor/channelFloor.js';
import type { FloorEffect } from '../floor/floorTypes.js';
import { stateValueText } from '../inspect/stateValueText.js';
import type { DayUsage } from '../ports/usage.js';
import { activeStateIds } from './chartStateIds.js';
import { emailActorId, eventLine, presenceActorId, threadActorId } from './eventSummary.js';
import { studioInterrupt } from './studioInterrupt.js';
import {
  type PlaygroundAvatar,
  type PlaygroundMessage,
  STUDIO_LIMITS,
  type StudioActor,
  type StudioAnswer,
  type StudioCapReached,
  type StudioState,
  type StudioTelemetry,
} from './studioState.js';

/** How a studio store starts. */
export interface StudioStoreOptions {
  /** The clock's time at the start. */
  now: number;
  /** Avatars by id, to name them in events (id → name). */
  avatarNames?: ReadonlyMap<string, string>;
  /** The playground channel and its avatars (none: an empty playground). */
  playground?: {
    channel: { platform: string; id: string };
    avatars: readonly Omit<PlaygroundAvatar, 'present'>[];
    /** Why the page may only watch the channel (see `StudioPlayground.readOnly`). */
    readOnly?: string;
  };
}

/** Lifecycle states an email does not leave. */
const FINISHED_EMAIL = new Set(['done', 'invalid', 'failed']);

/** Counter names by triage classification. */
const CLASSIFIED: Record<string, string> = { ignore: 'ignored', notify: 'notified', respond: 'responded' };

/** The store's initial state. */
export function emptyStudioState(options: StudioStoreOptions): StudioState {
  return {
    version: 0,
    now: options.now,
    actors: [],
    events: [],
    interrupts: [],
    answered: [],
    playground: {
      channel: options.playground?.channel ?? { platform: 'terminal', id: 'playground' },
      avatars: (options.playground?.avatars ?? []).map((a) => ({ ...a, present: false })),
      messages: [],
      ...(options.playground?.readOnly !== undefined ? { readOnly: options.playground.readOnly } : {}),
    },
    counters: {},
    telemetry: { modes: {}, total: 0, recent: [] },
    usage: { day: '', avatars: [], total: emptyTotals(), totalCaps: [], capsReached: [] },
  };
}

/** The caps reached with `reached` put last (replacing the one of its avatar, channel, reason and kind). */
function capReached(list: readonly StudioCapReached[], reached: StudioCapReached): StudioCapReached[] {
  const same = (c: StudioCapReached) =>
    c.avatarId === reached.avatarId &&
    c.channelKey === reached.channelKey &&
    c.reason === reached.reason &&
    c.notice === reached.notice;
  return [...list.filter((c) => !same(c)), reached].slice(-STUDIO_LIMITS.capsReached);
}

/** The usage with a cap the floor reported, if the event reports one. */
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

/** The channel key of the playground (`platform:id`). */
export function playgroundKey(state: StudioState): string {
  return `${state.playground.channel.platform}:${state.playground.channel.id}`;
}

/**
 * Where each actor of one `actors` array is, and which are finished or active presences: kept
 * beside the array (the state stays plain JSON), so an event costs what it changes, not the list.
 */
class ActorIndex {
  /** Slots go up in list order, so an actor's place is how many listed slots come before its own. */
  readonly #slots = new Map<string, number>();
  /** A Fenwick tree over the slots: 1 where the slot's actor is still listed. */
  #tree = new Int32Array(1);
  #used = 0;
  /** Ids of the finished actors: at most the limit between events, so pruning looks at few. */
  readonly finished = new Set<string>();
  /** Ids of the active presences, by channel key. */
  readonly presences = new Map<string, Set<string>>();

  static of(actors: readonly StudioActor[]): ActorIndex {
    const index = new ActorIndex();
    index.renumber(actors);
    for (const actor of actors) index.note(undefined, actor);
    return index;
  }

  get size(): number {
    return this.#slots.size;
  }

  /** Slots numbered again from the list (dropping the removed), with room for as many appends. */
  renumber(actors: readonly StudioActor[]): void {
    const n = actors.length;
    const tree = new Int32Array(Math.max(16, 2 * n) + 1);
    for (let i = 1; i < tree.length; i += 1) {
      if (i <= n) tree[i] = (tree[i] ?? 0) + 1;
      const up = i + (i & -i);
      if (up < tree.length) tree[up] = (tree[up] ?? 0) + (tree[i] ?? 0);
    }
    this.#slots.clear();
    for (const [i, a] of actors.entries()) this.#slots.set(a.id, i);
    this.#tree = tree;
    this.#used = n;
  }

  position(id: string): number | undefined {
    const slot = this.#slots.get(id);
    if (slot === undefined) return undefined;
    let listed = 0;
    for (let i = slot + 1; i > 0; i -= i & -i) listed += this.#tree[i] ?? 0;
    return listed - 1;
  }

  /** `actors` (the list) ends with the new actor of `id`. */
  append(id: string, actors: readonly StudioActor[]): void {
    if (this.#used + 1 >= this.#tree.length) {
      this.renumber(actors);
      return;
    }
    this.#slots.set(id, this.#used);
    this.#add(this.#used, 1);
    this.#used += 1;
  }

  remove(actor: StudioActor): void {
    const slot = this.#slots.get(actor.id);
    if (slot === undefined) return;
    this.#slots.delete(actor.id);
    this.#add(slot, -1);
    this.note(actor, undefined);
  }

  /** Keeps `finished` and `presences` true as `before` (if listed) becomes `after` (if still). */
  note(before: StudioActor | undefined, after: StudioActor | undefined): void {
    if (before) {
      this.finished.delete(before.id);
      const here = before.channelKey !== undefined ? this.presences.get(before.channelKey) : undefined;
      if (here?.delete(before.id) && here.size === 0) this.presences.delete(before.channelKey as string);
    }
    if (!after) return;
    if (after.status === 'done') this.finished.add(after.id);
    else if (after.kind === 'presence' && after.channelKey !== undefined) {
      const here = this.presences.get(after.channelKey);
      if (here) here.add(after.id);
      else this.presences.set(after.channelKey, new Set([after.id]));
    }
  }

  #add(slot: number, by: number): void {
    for (let i = slot + 1; i < this.#tree.length; i += i & -i) this.#tree[i] = (this.#tree[i] ?? 0) + by;
  }
}

/** The index of each `actors` array a state holds (an array not seen, or changed elsewhere, gets a new one). */
const indexes = new WeakMap<readonly StudioActor[], ActorIndex>();

function indexOf(actors: readonly StudioActor[]): ActorIndex {
  const known = indexes.get(actors);
  if (known && known.size === actors.length) return known;
  const index = ActorIndex.of(actors);
  indexes.set(actors, index);
  return index;
}

/** The actor of `id` in `actors`, found through their index. */
function actorIn(actors: readonly StudioActor[], id: string): StudioActor | undefined {
  const i = indexOf(actors).position(id);
  return i === undefined ? undefined : actors[i];
}

/**
 * The actors as one event changes them: copied on the first change (the state before keeps its
 * array), a changed actor keeping its place and a new one put last; {@link ActorDraft.done} bounds it.
 */
class ActorDraft {
  readonly #base: StudioActor[];
  #list: StudioActor[] | undefined;
  #index: ActorIndex | undefined;

  constructor(base: StudioActor[]) {
    this.#base = base;
  }

  get(id: string): StudioActor | undefined {
    const i = this.#taken().position(id);
    return i === undefined ? undefined : (this.#list ?? this.#base)[i];
  }

  put(actor: StudioActor): void {
    const index = this.#taken();
    const list = this.#copy();
    const i = index.position(actor.id);
    const before = i === undefined ? undefined : list[i];
    if (i === undefined) {
      list.push(actor);
      index.append(actor.id, list);
    } else list[i] = actor;
    index.note(before, actor);
  }

  /** Ids of the channel's active presences. */
  presencesIn(channelKey: string): string[] {
    return [...(this.#taken().presences.get(channelKey) ?? [])];
  }

  /**
   * The list: the same array when nothing changed. Active actors all stay; of the finished ones,
   * the latest {@link STUDIO_LIMITS.finishedActors} (by `updatedAt`, the earlier listed first on a tie).
   */
  done(): StudioActor[] {
    const index = this.#index;
    if (!index) return this.#base;
    if (index.finished.size > STUDIO_LIMITS.finishedActors) {
      const list = this.#copy();
      const ranked = [...index.finished].map((id) => {
        const place = index.position(id) as number;
        return { place, actor: list[place] as StudioActor };
      });
      ranked.sort((a, b) => b.actor.updatedAt - a.actor.updatedAt || a.place - b.place);
      const gone = ranked.slice(STUDIO_LIMITS.finishedActors);
      for (const { actor } of gone) index.remove(actor);
      dropAt(
        list,
        gone.map((g) => g.place).sort((a, b) => a - b),
      );
    }
    const list = this.#list ?? this.#base;
    indexes.set(list, index);
    return list;
  }

  /** The list this event changes, copied from the state's on the first change. */
  #copy(): StudioActor[] {
    if (!this.#list) this.#list = this.#base.slice();
    return this.#list;
  }

  /** The index, taken from the array it describes: an event that fails half-way leaves it none. */
  #taken(): ActorIndex {
    if (this.#index) return this.#index;
    this.#index = indexOf(this.#base);
    indexes.delete(this.#base);
    return this.#index;
  }
}

/** `list` without the items at `positions` (ascending), the others in order. */
function dropAt(list: StudioActor[], positions: readonly number[]): void {
  let kept = positions[0] ?? list.length;
  let next = 0;
  for (let i = kept; i < list.length; i += 1) {
    if (i === positions[next]) next += 1;
    else list[kept++] = list[i] as StudioActor;
  }
  list.length = kept;
}

function withValue(actor: Omit<StudioActor, 'stateIds'>): StudioActor {
  return { ...actor, stateIds: activeStateIds(actor.machine, actor.value) };
}

function bump(counters: Record<string, number>, name: string, by = 1): Record<string, number> {
  return { ...counters, [name]: (counters[name] ?? 0) + by };
}

/** A JSON-safe copy (drops functions and undefined, turns Maps and Sets into nothing surprising). */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value ?? null)) as T;
}

/** The counters after an inspection event. */
function countedAfter(counters: Record<string, number>, event: InspectionEvent): Record<string, number> {
  if (event.type === 'turn.generated') return bump(counters, 'turnsGenerated');
  if (event.type === 'turn.generation-failed') return bump(counters, 'turnsFailed');
  if (event.type === 'response.prepared') return bump(counters, 'responsesPrepared');
  if (event.type !== 'floor.effect') return counters;
  const { effect } = event;
  if (effect.type === 'candidate.suppressed') return bump(counters, 'suppressed');
  if (effect.type === 'presence.summoned') return bump(counters, 'summoned');
  if (effect.type === 'thread.opened') return bump(counters, 'threadsOpened');
  if (effect.type === 'thread.ended') {
    const outcome = effect.outcome;
    return bump(counters, `threads${outcome.charAt(0).toUpperCase()}${outcome.slice(1)}`);
  }
  return counters;
}

/** Threads opening and ending, presences dismissed. */
function effectOnActors(
  actors: ActorDraft,
  channelKey: string,
  effect: FloorEffect,
  name: (id: string) => string,
): void {
  if (effect.type === 'thread.opened')
    actors.put(
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
  if (effect.type === 'thread.ended') {
    const outcome = effect.outcome;
    const id = threadActorId(effect.threadId);
    const before = actors.get(id);
    actors.put(
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
    const before = actors.get(presenceActorId(channelKey, effect.avatarId));
    if (before)
      actors.put(withValue({ ...before, status: 'done', value: 'dismissed', updatedAt: effect.at }));
  }
}

/**
 * A channel's actor stopped (passivated, retired, taken by another process, the runtime stopping):
 * its presences are no longer live, so they are listed as done (keeping their state), else every
 * presence of every channel ever seen would stay. Its next floor view lists them active again. The
 * playground's stay: its page and `/who` show who is in it.
 */
function channelStopped(actors: ActorDraft, channelKey: string, at: number): void {
  for (const id of actors.presencesIn(channelKey)) {
    const before = actors.get(id);
    if (before) actors.put({ ...before, status: 'done', updatedAt: at });
  }
}

/** The state after an inspection event: the event line, counters, threads opening and ending. */
function inspected(
  state: StudioState,
  event: InspectionEvent,
  name: (id: string) => string,
): Omit<StudioState, 'version'> {
  const last = state.events.at(-1)?.seq ?? 0;
  const events = [...state.events, { seq: last + 1, ...eventLine(event, name) }].slice(-STUDIO_LIMITS.events);
  const actors = new ActorDraft(state.actors);
  if (event.type === 'floor.effect') effectOnActors(actors, event.channelKey, event.effect, name);
  if (event.type === 'actor.stopped' && event.channelKey !== playgroundKey(state))
    channelStopped(actors, event.channelKey, event.at);
  return {
    ...state,
    now: Math.max(state.now, event.at),
    events,
    actors: actors.done(),
    counters: countedAfter(state.counters, event),
    usage: usageAfter(state.usage, event),
  };
}

/** The state after a fresh view of a channel's floor: its presences and threads as they are. */
function floorViewed(state: StudioState, channelKey: string, view: FloorView, name: (id: string) => string) {
  const actors = new ActorDraft(state.actors);
  const present = new Set<string>();
  for (const p of view.present) {
    const { state: value, ...context } = p;
    const id = presenceActorId(channelKey, p.id);
    present.add(id);
    actors.put(
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
  // Present before and not now: dismissed (the floor forgets a presence when it leaves).
  for (const id of actors.presencesIn(channelKey)) {
    const before = actors.get(id);
    if (before && !present.has(id))
      actors.put(withValue({ ...before, status: 'done', value: 'dismissed', updatedAt: view.now }));
  }
  for (const t of view.threads) {
    const { state: value, status, ...context } = t;
    actors.put(
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
  return { ...state, now: Math.max(state.now, view.now), actors: actors.done(), playground };
}

/** The playground's avatars as they are now, each still present if it was. */
function avatarsChanged(state: StudioState, avatars: readonly Omit<PlaygroundAvatar, 'present'>[]) {
  const here = new Set(state.playground.avatars.filter((a) => a.present).map((a) => a.id));
  return {
    ...state,
    playground: { ...state.playground, avatars: avatars.map((a) => ({ ...a, present: here.has(a.id) })) },
  };
}

/** The state after an email's record was written. */
function emailChanged(state: StudioState, record: EmailRecord) {
  const id = emailActorId(record.email.id);
  const actors = new ActorDraft(state.actors);
  const before = actors.get(id);
  let { counters } = state;
  if (!before) counters = bump(counters, 'emailsReceived');
  const classification = record.decision?.classification;
  if (classification && before?.context.classification === undefined)
    counters = bump(counters, CLASSIFIED[classification] ?? classification);
  const value = plain(record.state.value) as StateValue;
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
  actors.put(actor);
  const last = state.events.at(-1)?.seq ?? 0;
  const line = {
    seq: last + 1,
    at,
    actorId: id,
    type: 'email.changed',
    summary: `“${record.email.subject}” is ${stateValueText(value)}`,
  };
  // The latest answer about this email shows where it left the email (earlier answers keep theirs).
  const latest = state.answered.findIndex((a) => a.emailId === record.email.id);
  const answered = state.answered.map((a, i) => (i === latest ? { ...a, emailState: value } : a));
  return {
    ...state,
    actors: actors.done(),
    counters,
    answered,
    events: [...state.events, line].slice(-STUDIO_LIMITS.events),
  };
}

/** The state after the inbox changed: what waits now, and answers given. */
function inboxChanged(state: StudioState, pending: readonly InboxItem[], answeredNow: readonly InboxItem[]) {
  let answered = [...state.answered];
  let { counters } = state;
  for (const item of answeredNow) {
    if (!item.answer) continue;
    const email = actorIn(state.actors, emailActorId(item.emailId));
    const entry: StudioAnswer = {
      interruptId: item.id,
      emailId: item.emailId,
      at: item.answeredAt ?? state.now,
      type: item.answer.type,
      emailState: email ? email.value : null,
      ...(item.memory ? { memory: { ...item.memory } } : {}),
    };
    const i = answered.findIndex((a) => a.interruptId === item.id);
    if (i >= 0) answered[i] = entry;
    else {
      answered = [entry, ...answered];
      counters = bump(counters, 'interruptsAnswered');
    }
  }
  const gone = new Set(answeredNow.map((a) => a.id));
  return {
    ...state,
    interrupts: [...pending]
      .filter((p) => !gone.has(p.id))
      .sort((a, b) => a.createdAt - b.createdAt)
      .map(studioInterrupt),
    answered: answered.slice(0, STUDIO_LIMITS.answered),
    counters,
  };
}

/** The state with a playground message added (or replaced, when it is one seen before). */
function playgroundPosted(state: StudioState, message: PlaygroundMessage) {
  const messages = [...state.playground.messages];
  const i = messages.findIndex((m) => m.id === message.id);
  const before = messages[i];
  if (before) messages[i] = { ...before, ...message, at: before.at };
  else messages.push(message);
  return {
    ...state,
    playground: { ...state.playground, messages: messages.slice(-STUDIO_LIMITS.messages) },
  };
}

/**
 * The studio's store: an `@xstate/store` whose context is the {@link StudioState}, changed only by
 * these events (pure reducers, no I/O; {@link attachStudioProjection} sends them):
 * - `inspected`: an event of the runtime's `inspection$`;
 * - `floorViewed`: a channel's {@link FloorView} after it changed;
 * - `emailChanged`: an email's record after it was written;
 * - `inboxChanged`: the pending interrupts, and interrupts answered since;
 * - `avatarsChanged`: the runtime's avatars after summoning created one or one was forgotten;
 * - `playgroundPosted`: a message of the playground channel;
 * - `telemetryRead`: composed-response telemetry and counters read from the store;
 * - `usageRead`: the UTC day's usage per avatar and the daily caps, from the runtime's usage ledger;
 * - `ticked`: the clock's time.
 * Every event moves `version` up by one.
 */
export function createStudioStore(options: StudioStoreOptions) {
  // The names labels are made with; `avatarsChanged` brings them up to date (summoning creates avatars).
  const names = new Map(options.avatarNames ?? []);
  const name = (id: string) => names.get(id) ?? id;
  const next = (state: StudioState, changed: Omit<StudioState, 'version'>): StudioState => ({
    ...changed,
    version: state.version + 1,
  });
  return createStore({
    context: emptyStudioState(options),
    on: {
      inspected: (state, e: { event: InspectionEvent }) => next(state, inspected(state, e.event, name)),
      floorViewed: (state, e: { channelKey: string; view: FloorView }) =>
        next(state, floorViewed(state, e.channelKey, e.view, name)),
      emailChanged: (state, e: { record: EmailRecord }) => next(state, emailChanged(state, e.record)),
      inboxChanged: (state, e: { pending: readonly InboxItem[]; answered: readonly InboxItem[] }) =>
        next(state, inboxChanged(state, e.pending, e.answered)),
      avatarsChanged: (
        state,
        e: { avatars: readonly Omit<PlaygroundAvatar, 'present'>[]; playground: boolean },
      ) => {
        names.clear();
        for (const a of e.avatars) names.set(a.id, a.name);
        return next(state, e.playground ? avatarsChanged(state, e.avatars) : state);
      },
      playgroundPosted: (state, e: { message: PlaygroundMessage }) =>
        next(state, playgroundPosted(state, e.message)),
      telemetryRead: (state, e: { telemetry: StudioTelemetry; counters: Record<string, number> }) =>
        next(state, { ...state, telemetry: e.telemetry, counters: { ...state.counters, ...e.counters } }),
      usageRead: (state, e: { usage: DayUsage }) =>
        next(state, { ...state, usage: { ...plain(e.usage), capsReached: state.usage.capsReached } }),
      ticked: (state, e: { now: number }) => next(state, { ...state, now: Math.max(state.now, e.now) }),
    },
  });
}

/** A studio store (see {@link createStudioStore}). */
export type StudioStore = ReturnType<typeof createStudioStore>;
