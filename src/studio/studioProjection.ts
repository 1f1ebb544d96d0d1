import { Subscription } from 'rxjs';
import type { EmailAssistant } from '../actors/email/emailAssistant.js';
import type { InboxItem } from '../actors/email/emailRecord.js';
import { channelFromKey, channelKey } from '../actors/runtime.js';
import type { Runtime } from '../actors/runtimeOptions.js';
import { AGENT_EVENT_LOGS } from '../actors/tools/lookupDesk.js';
import { dayUsageOf } from '../actors/usage/dayUsage.js';
import type { TerminalMessage, TerminalTransport } from '../adapters/terminal/terminalTransport.js';
import { composerCounters } from '../composer/telemetry.js';
import { type CoordinationConfig, defaultCoordinationConfig } from '../config/coordinationConfig.js';
import type { FloorView } from '../floor/channelFloor.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import type { Clock } from '../ports/clock.js';
import type { ChannelRef } from '../ports/outgoingResponse.js';
import { STUDIO_LIMITS, type StudioTelemetry } from './studioState.js';
import type { StudioStore } from './studioStore.js';

/** What a projection follows. */
export interface StudioProjectionOptions {
  store: StudioStore;
  runtime: Runtime;
  /** The runtime's clock: the state's `now` follows it. */
  clock: Clock;
  /** Where a failed telemetry read is told (the studio goes on with the figures it has). */
  logger?: Logger;
  /** The email assistant whose records and inbox the studio shows. */
  emailAssistant?: EmailAssistant;
  /** The coordination settings the runtime runs with: the daily caps shown with usage. Default: none set. */
  config?: CoordinationConfig;
  /** The playground channel's transport: its messages are the playground's. */
  playground?: { transport: TerminalTransport; channelId: string };
  /**
   * Channels whose floors are read from the store on {@link StudioProjection.refresh} (the floors
   * other processes run): default none.
   */
  storedFloors?: () => Promise<{ channelKey: string; view: FloorView }[]>;
}

/** A projection attached to a runtime. */
export interface StudioProjection {
  /** Resolves once the first reads (the inbox as it stands, telemetry) are in the store. */
  readonly ready: Promise<void>;
  /**
   * Opens a channel in the runtime (loading it from the store) and puts its floor in the store:
   * who is there from the start, before any event (a channel's load itself tells nothing).
   */
  open(channel: ChannelRef): Promise<FloorView>;
  /**
   * Reads the store again for what other processes changed: the inbox (an interrupt answered
   * elsewhere moves to the answered list), the telemetry, and the stored floors when given.
   */
  refresh(): Promise<void>;
  detach(): void;
}

/** How many turn reasons are remembered until their reply is delivered. */
const CLAIMS_REMEMBERED = 200;

/**
 * Keeps a studio store up to date with a runtime: every inspection event is sent to it; after a
 * burst of events about a channel its floor view is read once (so presences and threads show the
 * machine state they are in, a thread that expired on a clock wakeup included); the email
 * assistant's changes (pushed after each write) move the emails and the inbox; the playground's
 * messages carry the reason the floor gave for each avatar turn; telemetry is read again from the
 * store's event log after a response was prepared; the day's usage is read from the runtime's
 * usage ledger (in memory) with each floor view and once at the start, and, with stored floors,
 * loaded again from the store at each refresh (the calls are other processes'). Nothing polls.
 */
export function attachStudioProjection(options: StudioProjectionOptions): StudioProjection {
  const { store, runtime, clock, emailAssistant, playground } = options;
  const log = options.logger ?? silentLogger();
  const subscriptions = new Subscription();
  let detached = false;
  const readUsage = usageReader(options);
  readUsage();

  // Floor views, read once per channel after the events of one synchronous burst.
  const dirty = new Set<string>();
  let flushQueued = false;
  const flushViews = () => {
    flushQueued = false;
    if (detached) return;
    for (const key of dirty) {
      const view = runtime.view(channelFromKey(key));
      if (view) store.send({ type: 'floorViewed', channelKey: key, view });
    }
    dirty.clear();
    readUsage();
    store.send({ type: 'ticked', now: clock.now() });
  };
  const viewLater = (key: string) => {
    dirty.add(key);
    if (!flushQueued) {
      flushQueued = true;
      queueMicrotask(flushViews);
    }
  };

  const refreshTelemetry = telemetryReader(runtime, store, log, () => detached);

  // The floor's reason for each turn, until its reply is delivered.
  const reasons = new Map<string, string>();
  const playgroundKey = playground ? channelKey({ kind: 'terminal', id: playground.channelId }) : undefined;

  subscriptions.add(
    runtime.avatarChanges$.subscribe(() =>
      store.send({
        type: 'avatarsChanged',
        avatars: runtime.avatars.map((a) => ({
          id: a.id,
          name: a.name,
          ...(a.emoji ? { emoji: a.emoji } : {}),
        })),
        playground: playground !== undefined,
      }),
    ),
  );
  subscriptions.add(
    runtime.inspection$.subscribe((event) => {
      store.send({ type: 'inspected', event });
      if (event.type === 'routing.outcome') {
        const key = channelKey(event.outcome.channel);
        viewLater(key);
        const turnId = event.outcome.origin.turnId;
        const why = turnId !== undefined ? reasons.get(turnId) : undefined;
        if (turnId !== undefined) reasons.delete(turnId);
        if (why && key === playgroundKey && playground)
          for (const part of event.outcome.parts) {
            const message = playground.transport.lookup(part.messageId);
            if (message)
              store.send({ type: 'playgroundPosted', message: { ...messageOf(message, clock), why } });
          }
        return;
      }
      viewLater(event.channelKey);
      if (event.type === 'floor.effect' && event.effect.type === 'turn.claimed') {
        reasons.set(event.effect.turn.turnId, event.effect.turn.reason);
        if (reasons.size > CLAIMS_REMEMBERED) reasons.delete(reasons.keys().next().value as string);
      }
      if (event.type === 'response.prepared') void refreshTelemetry();
    }),
  );

  if (playground) {
    const off = playground.transport.onMessage((message) => {
      if (!detached && message.channelId === playground.channelId)
        store.send({ type: 'playgroundPosted', message: messageOf(message, clock) });
    });
    subscriptions.add(off);
  }

  const inbox = emailAssistant
    ? inboxFollower(emailAssistant, store, subscriptions, () => detached)
    : undefined;
  const ready = Promise.all([refreshTelemetry(), inbox?.ready]).then(() => undefined);
  const refreshFloors = async () => {
    if (!options.storedFloors) return;
    const floors = await options.storedFloors();
    // The day's usage too: the calls are other processes', stored in the same ledger.
    await runtime.usage
      ?.load(clock.now())
      .catch((error: unknown) => log.warn({ err: error }, "today's stored usage could not be read"));
    if (detached) return;
    for (const { channelKey: key, view } of floors)
      store.send({ type: 'floorViewed', channelKey: key, view });
    readUsage();
  };

  return {
    ready,
    async refresh() {
      await Promise.all([inbox?.refresh(), refreshTelemetry(), refreshFloors()]);
      if (!detached) store.send({ type: 'ticked', now: clock.now() });
    },
    async open(channel) {
      const view = await runtime.open(channel);
      if (!detached) store.send({ type: 'floorViewed', channelKey: channelKey(channel), view });
      return view;
    },
    detach() {
      detached = true;
      subscriptions.unsubscribe();
    },
  };
}

/**
 * The inbox as this process sees it: what waits, by id, updated from the assistant's changes;
 * `refresh` reads the store again, so an interrupt answered by another process (an
 * `troupe inbox answer`) moves to the answered list with its email's state.
 */
function inboxFollower(
  assistant: EmailAssistant,
  store: StudioStore,
  subscriptions: Subscription,
  detached: () => boolean,
): { ready: Promise<void>; refresh(): Promise<void> } {
  const pending = new Map<string, InboxItem>();
  const sendInbox = (answered: InboxItem[]) =>
    store.send({ type: 'inboxChanged', pending: [...pending.values()], answered });
  subscriptions.add(
    assistant.changes$.subscribe((change) => {
      if (change.type === 'record') store.send({ type: 'emailChanged', record: change.record });
      else if (change.type === 'interrupt.removed') {
        pending.delete(change.interruptId);
        sendInbox([]);
      } else if (change.item.status === 'pending') {
        pending.set(change.item.id, change.item);
        sendInbox([]);
      } else {
        pending.delete(change.item.id);
        sendInbox([change.item]);
      }
    }),
  );
  const ready = assistant.pending().then((items) => {
    for (const item of items) if (!pending.has(item.id)) pending.set(item.id, item);
    if (!detached()) sendInbox([]);
  });
  const refresh = async () => {
    const now = await assistant.pending();
    const ids = new Set(now.map((item) => item.id));
    const gone = [...pending.keys()].filter((id) => !ids.has(id));
    const answered = (await Promise.all(gone.map((id) => assistant.interrupt(id)))).filter(
      (item): item is InboxItem => item?.status === 'answered',
    );
    const emails = new Set([...now, ...answered].map((item) => item.emailId));
    const records = await Promise.all([...emails].map((id) => assistant.record(id)));
    if (detached()) return;
    for (const record of records) if (record) store.send({ type: 'emailChanged', record });
    pending.clear();
    for (const item of now) pending.set(item.id, item);
    sendInbox(answered);
  };
  return { ready, refresh };
}

/**
 * Telemetry, read again from the store's event log after responses: one read at a time, and the
 * next one after it if asked meanwhile. Returns the refresh; it resolves when the figures are in.
 */
function telemetryReader(
  runtime: Runtime,
  store: StudioStore,
  log: Logger,
  detached: () => boolean,
): () => Promise<void> {
  let afterSeq = 0;
  let telemetry: StudioTelemetry = { modes: {}, total: 0, recent: [] };
  let reading: Promise<void> | undefined;
  let readAgain = false;
  const readTelemetry = async () => {
    const events = runtime.store.events;
    for (;;) {
      const batch = await events.read(AGENT_EVENT_LOGS, { afterSeq, limit: 500 });
      if (batch.length === 0) break;
      const modes = { ...telemetry.modes };
      const recent = [...telemetry.recent];
      for (const e of batch) {
        const mode = typeof e.data.response_mode === 'string' ? e.data.response_mode : 'unknown';
        modes[mode] = (modes[mode] ?? 0) + 1;
        recent.push({ at: e.at, mode, origin: e.stream });
        afterSeq = e.seq;
      }
      telemetry = {
        modes,
        total: telemetry.total + batch.length,
        recent: recent.slice(-STUDIO_LIMITS.telemetryRecent),
      };
    }
    const counters: Record<string, number> = {};
    for (const name of Object.values(composerCounters)) counters[name] = await events.counter(name);
    if (!detached()) store.send({ type: 'telemetryRead', telemetry, counters });
  };
  const refreshTelemetry = (): Promise<void> => {
    if (reading) {
      readAgain = true;
      return reading;
    }
    reading = readTelemetry()
      .catch((error: unknown) =>
        log.warn({ err: error }, 'could not read the telemetry; its figures stay as they were'),
      )
      .finally(() => {
        reading = undefined;
        if (readAgain && !detached()) {
          readAgain = false;
          void refreshTelemetry();
        }
      });
    return reading;
  };

  return refreshTelemetry;
}

/** A terminal message as the playground shows it. */
function messageOf(message: TerminalMessage, clock: Clock) {
  const { author } = message;
  return {
    id: message.messageId,
    at: clock.now(),
    author: { kind: author.kind, id: author.id, name: author.name },
    text: message.text,
    ...(message.replyTo ? { replyTo: message.replyTo.messageId } : {}),
  };
}

/** Sends the UTC day's usage from the runtime's ledger (held in memory: nothing is read from the store). */
function usageReader(options: StudioProjectionOptions): () => void {
  const { runtime, store, clock } = options;
  const config = options.config ?? defaultCoordinationConfig;
  return () => {
    if (runtime.usage)
      store.send({
        type: 'usageRead',
        usage: dayUsageOf(runtime.usage, config, runtime.avatars, clock.now()),
      });
  };
}
