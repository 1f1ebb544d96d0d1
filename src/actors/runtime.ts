import { randomUUID } from 'node:crypto';
import { filter, type Observable, Subject } from 'rxjs';
import { compose } from '../composer/compose.js';
import { DEFAULT_MAX_REPLY_CHARS } from '../config/replySettings.js';
import { prepareOutgoingResponse } from '../delivery/preparation.js';
import { createLogger } from '../logging/logger.js';
import { ChannelFloor, type FloorView } from '../machines/channelFloor.js';
import { FloorSnapshotError } from '../machines/floorSnapshot.js';
import type { OutboxEntry } from '../ports/outbox.js';
import type { ChannelRef } from '../ports/outgoingResponse.js';
import { plainError } from '../ports/plainError.js';
import type { RoutingOutcome } from '../ports/routingOutcome.js';
import { describe, TroupeError } from '../ports/troupeError.js';
import { ActorRegistry } from './actorRegistry.js';
import { avatarListSchema, toProfile } from './avatarDefinition.js';
import { ChannelActor, type ChannelActorDeps, type ChannelStart, speakerOf } from './channelActor.js';
import { ChannelLeases, leaseOwner } from './channelLeases.js';
import { LEDGER } from './channelLedger.js';
import { CHANNELS, ChannelPersistence } from './channelPersistence.js';
import { restoreChannel } from './channelRestore.js';
import { systemClock } from './clock.js';
import type { InspectionEvent } from './inspectionEvent.js';
import { parseRuntimeEvent } from './parseRuntimeEvent.js';
import { RelationshipTracker } from './relationshipTracker.js';
import { RoutingActor } from './routingActor.js';
import type { RuntimeEvent } from './runtimeEvents.js';
import type { ResolvedRuntimeOptions, Runtime, SendResult, StopOptions } from './runtimeOptions.js';
import { LookupDesk } from './tools/lookupDesk.js';
import { TurnExecutor } from './turnExecutor.js';
import { WakeupScheduler } from './wakeupScheduler.js';
import { type ExternalWait, WorkTracker } from './workTracker.js';

/** How long `stop()` waits for work in flight by default. */
export const DEFAULT_STOP_DEADLINE_MS = 30_000;

/**
 * The key of a channel: `kind:id`, with `%` and `:` in the kind escaped (`%25`, `%3A`), so the
 * first `:` always ends the kind and two channels never share a key (kind `a:b` with id `c` and
 * kind `a` with id `b:c` would otherwise both be `a:b:c`: one actor, one history). Kinds without
 * those characters keep the plain form, so keys stored before stay valid.
 */
export function channelKey(channel: ChannelRef): string {
  const kind = channel.kind;
  return kind.includes(':') || kind.includes('%')
    ? `${kind.replaceAll('%', '%25').replaceAll(':', '%3A')}:${channel.id}`
    : `${kind}:${channel.id}`;
}

/**
 * Starts the runtime core on resolved options (the entry point, `createRuntime`, chooses the
 * defaults): one actor per channel in a registry, a routing actor over the transports, the turn
 * executor over the model and history, all wired by RxJS streams.
 *
 * @throws TroupeError `TROUPE_AVATARS_INVALID` when the avatar list does not validate.
 */
export function startRuntime(options: ResolvedRuntimeOptions): Runtime {
  const parsedAvatars = avatarListSchema.safeParse(options.avatars);
  if (!parsedAvatars.success) {
    throw new TroupeError(
      'TROUPE_AVATARS_INVALID',
      `The avatar definitions are invalid: ${parsedAvatars.error.issues
        .map((i) => `avatars.${i.path.join('.')}: ${i.message}`)
        .join('; ')}`,
    );
  }
  const avatars = parsedAvatars.data;
  const avatarsById = new Map(avatars.map((a) => [a.id, a]));
  const roster = avatars.map(toProfile);
  const { config, model, store } = options;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger();
  const durable = options.persistence?.durable ?? store.kind !== 'memory';
  const passivateAfterMs = options.persistence?.passivateAfterMs ?? 10 * 60_000;
  const idleExpiryMs = options.persistence?.idleExpiryMs ?? 14 * 24 * 3_600_000;
  const tracker = new WorkTracker(externalWaits(options));
  const registry = new ActorRegistry<ChannelActor>();
  const inspection$ = new Subject<InspectionEvent>();
  const errors$ = new Subject<TroupeError>();
  const routing = new RoutingActor({
    transports: options.transports ?? [],
    outbox: store.outbox,
    clock,
    logger: logger.child({ actor: 'routing' }),
    ...(options.speech ? { speech: options.speech } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.sendTimeoutMs !== undefined ? { sendTimeoutMs: options.sendTimeoutMs } : {}),
  });
  const relationships = new RelationshipTracker({
    documents: store.documents,
    clock,
    logger: logger.child({ actor: 'relationships' }),
    writeBehind: durable,
  });
  const lookupDesk = options.lookup
    ? new LookupDesk({
        tool: options.lookup.tool,
        compose,
        ...(options.lookup.composer ? { composer: options.lookup.composer } : {}),
        ...(options.lookup.choiceTtlMs !== undefined ? { choiceTtlMs: options.lookup.choiceTtlMs } : {}),
        events: store.events,
        logger: logger.child({ actor: 'lookup' }),
      })
    : undefined;
  const executor = new TurnExecutor({
    ...(lookupDesk ? { lookupDesk } : {}),
    toolUsers: new Set(avatars.filter((a) => a.tools.includes('entity_lookup')).map((a) => a.id)),
    model,
    history: store.history,
    relationships,
    avatars: new Map(roster.map((a) => [a.id, a])),
    ...(options.historyLimit !== undefined ? { historyLimit: options.historyLimit } : {}),
  });
  let stopping: Promise<void> | undefined;
  const persistence = new ChannelPersistence({
    documents: store.documents,
    clock,
    logger: logger.child({ actor: 'persistence' }),
    ...(options.persistence?.ledgerLimit !== undefined
      ? { ledgerLimit: options.persistence.ledgerLimit }
      : {}),
    ...(options.persistence?.flushIntervalMs !== undefined
      ? { flushIntervalMs: options.persistence.flushIntervalMs }
      : {}),
    writeBehind: durable,
    onError: (error) => errors$.next(error),
    onTimedFlush: (done) => tracker.track(done, tracker.begin('write', 'store')),
    // Another process wrote this channel: drop ours; the next event loads theirs.
    onConflict: (key) => {
      if (registry.stop(key))
        inspect({ type: 'actor.stopped', at: clock.now(), channelKey: key, reason: 'conflict' });
      void leases?.release(key);
    },
  });
  // Processes sharing a durable store take turns per channel (one writer each): see ChannelLeases.
  const leases = durable
    ? new ChannelLeases({
        documents: store.documents,
        clock,
        owner: leaseOwner(randomUUID().slice(0, 8)),
        ...(options.persistence?.leaseTtlMs !== undefined ? { ttlMs: options.persistence.leaseTtlMs } : {}),
        logger: logger.child({ actor: 'leases' }),
        onLost: (key) => {
          if (registry.stop(key))
            inspect({ type: 'actor.stopped', at: clock.now(), channelKey: key, reason: 'conflict' });
        },
      })
    : undefined;

  if (model.offline) {
    logger.info(
      { model: model.id },
      'no language model configured: avatars answer with the offline scripted model (set TROUPE_MODEL_PROVIDER or OPENAI_API_KEY to use a real one)',
    );
  } else {
    logger.info({ model: model.id }, 'language model configured');
  }

  // Residents by channel, so a channel with residents starts with them present.
  const residents = new Map<string, { channel: ChannelRef; ids: string[] }>();
  for (const avatar of avatars) {
    for (const spec of avatar.residentIn) {
      const split = spec.indexOf(':');
      const channel = { kind: spec.slice(0, split), id: spec.slice(split + 1) };
      const key = channelKey(channel);
      const entry = residents.get(key) ?? { channel, ids: [] };
      entry.ids.push(avatar.id);
      residents.set(key, entry);
    }
  }

  const inspect = (event: InspectionEvent) => inspection$.next(event);
  const inspecting = () => inspection$.observed;
  // The cast as turns need it, made once and shared by every turn (frozen: responses carry them).
  const cast: ChannelActorDeps['cast'] = {
    avatarIds: avatars.map((a) => a.id),
    avatarNames: avatars.flatMap((a) => [a.name, ...(a.aliases ?? [])]),
    speakers: new Map(avatars.map((a) => [a.id, Object.freeze(speakerOf(a))])),
    speakerNames: new Map(avatars.map((a) => [a.id, Object.freeze([a.name, ...(a.aliases ?? [])])])),
    voicePolicies: new Map(avatars.map((a) => [a.id, Object.freeze({ mode: a.voice })])),
  };

  const fresh = (key: string): ChannelStart => ({
    floor: new ChannelFloor({
      channelId: key,
      config,
      roster,
      present: residents.get(key)?.ids ?? [],
      at: clock.now(),
      epoch: randomUUID().slice(0, 8),
    }),
    restored: false,
  });

  /** Loads a channel from the store; anything unusable is reported and the channel starts fresh. */
  const load = async (key: string): Promise<ChannelStart> => {
    try {
      const loaded = await persistence.load(key);
      if (loaded.kind === 'invalid') {
        logger.error({ channel: key, err: loaded.error }, loaded.error.message);
        errors$.next(loaded.error);
        return fresh(key);
      }
      if (loaded.kind === 'fresh') return fresh(key);
      try {
        const setting = { channelId: key, config, roster, now: () => clock.now() };
        return { ...restoreChannel(loaded.document, loaded.events, setting), restored: true };
      } catch (error) {
        if (!FloorSnapshotError.isInstance(error)) throw error;
        const stored = await store.documents.get(CHANNELS, key);
        if (stored) await persistence.quarantine(key, stored.value, stored.version);
        logger.error({ channel: key, err: error }, error.message);
        errors$.next(error);
        return fresh(key);
      }
    } catch (error) {
      // The store is away: the channel works from a fresh state rather than not at all.
      const failure = new TroupeError(
        'TROUPE_STORE_UNAVAILABLE',
        `Channel ${key} could not be loaded from the store; it runs from a fresh state until the store is back.`,
        { retryable: true, cause: error },
      );
      logger.error({ channel: key, err: failure }, failure.message);
      errors$.next(failure);
      return fresh(key);
    }
  };

  /** Takes the channel's lease, then loads it; refuses with `TROUPE_CHANNEL_OWNED` if another runtime has it. */
  const leased = async (key: string, channel: ChannelRef): Promise<ChannelStart> => {
    let holder: Awaited<ReturnType<ChannelLeases['acquire']>>;
    try {
      holder = await (leases as ChannelLeases).acquire(key);
    } catch (error) {
      // Without the lease we cannot know that nobody else answers here: refuse rather than risk it.
      throw new TroupeError(
        'TROUPE_CHANNEL_OWNED',
        `Channel ${key} was not taken: its lease could not be read or written (${describe(error)}); its events are refused until the store answers.`,
        { retryable: true, cause: error, details: { channel } },
      );
    }
    if (holder)
      throw new TroupeError(
        'TROUPE_CHANNEL_OWNED',
        `Channel ${key} is handled by another Troupe process (${holder.owner}) sharing this store; its events are refused here until that process stops or its lease lapses (${new Date(holder.expiresAt).toISOString()}). Route a channel's events to one process (e.g. one discord.js shard per guild).`,
        { retryable: true, details: { channel, owner: holder.owner, expiresAt: holder.expiresAt } },
      );
    return load(key);
  };

  const activate = (channel: ChannelRef): ChannelActor => {
    const key = channelKey(channel);
    const { actor, created } = registry.activate(
      key,
      () =>
        new ChannelActor({
          channel,
          key,
          avatars: avatarsById,
          hasResidents: (residents.get(key)?.ids.length ?? 0) > 0,
          config,
          clock,
          executor,
          routing,
          tracker,
          logger,
          inspect,
          inspecting,
          cast,
          afterOutcome: retireIfFinished,
          onError: (error) => errors$.next(error),
          maxReplyChars: options.maxReplyChars ?? DEFAULT_MAX_REPLY_CHARS,
          persistence,
          outbox: store.outbox,
          durable,
        }),
    );
    if (created) {
      inspect({ type: 'actor.activated', at: clock.now(), channelKey: key });
      tracker.track(
        actor
          .start(() => (leases ? leased(key, channel) : load(key)))
          .catch((error: unknown) => {
            if (TroupeError.isInstance(error) && error.code === 'TROUPE_CHANNEL_OWNED') {
              // Another runtime has the channel: its events here are refused, and the next one
              // tries again (the lease may have lapsed by then).
              const refused = actor.discardWaiting();
              if (registry.get(key) === actor) registry.stop(key);
              const failure = new TroupeError(error.code, error.message, {
                retryable: true,
                details: { ...error.details, refusedEvents: refused },
              });
              logger.warn({ channel: key, err: failure }, failure.message);
              errors$.next(failure);
              inspect({ type: 'actor.stopped', at: clock.now(), channelKey: key, reason: 'conflict' });
              return;
            }
            logger.error({ channel: key, err: error }, 'channel failed to start');
          }),
        tracker.begin('load', 'store', key),
      );
    }
    return actor;
  };

  const retireIfFinished = (actor: ChannelActor) => {
    // A retired actor's late outcome (a reply it sent before it was dropped) must not stop the
    // actor that has taken the channel since.
    if (registry.get(actor.key) !== actor || !actor.isFinished()) return;
    registry.stop(actor.key);
    const key = actor.key;
    tracker.track(
      persistence
        .compact(key, actor)
        .catch(() => undefined)
        .then(() => (registry.get(key) ? undefined : leases?.release(key))),
      tracker.begin('write', 'store', key),
    );
    inspect({ type: 'actor.stopped', at: clock.now(), channelKey: actor.key, reason: 'finished' });
  };

  // Passivated channels with a deadline (a thread TTL, a follow-up) are woken up when it comes.
  const wakeups = new WakeupScheduler(clock, (key) => {
    if (stopping || registry.get(key)) return;
    activate(channelFromKey(key));
  });

  const passivate = async (actor: ChannelActor) => {
    await persistence.compact(actor.key, actor);
    // Something may have arrived while writing.
    if (!actor.canPassivate() || registry.get(actor.key) !== actor || persistence.isDirty(actor.key)) return;
    const wakeAt = actor.wakeAt();
    registry.stop(actor.key);
    await leases?.release(actor.key);
    if (wakeAt !== undefined) wakeups.schedule(actor.key, wakeAt);
    inspect({ type: 'actor.stopped', at: clock.now(), channelKey: actor.key, reason: 'passivated' });
  };

  let lastExpiry = Number.NEGATIVE_INFINITY;
  const sweep = () => {
    if (stopping) return;
    const now = clock.now();
    for (const key of [...registry.keys()]) {
      const actor = registry.get(key);
      if (actor?.canPassivate() && now - actor.lastActivityAt >= passivateAfterMs)
        tracker.track(
          passivate(actor).catch(() => undefined),
          tracker.begin('passivate', 'store', key),
        );
    }
    if (now - lastExpiry >= 3_600_000) {
      lastExpiry = now;
      tracker.track(
        Promise.all([
          store.documents.expireIdle(CHANNELS, now - idleExpiryMs),
          // A channel's ledger is written no earlier than its snapshot: it expires with it.
          store.documents.expireIdle(LEDGER, now - idleExpiryMs),
        ])
          .then(([n]) => {
            if (n > 0) logger.info({ expired: n }, 'expired idle channel state');
          })
          .catch(() => undefined),
        tracker.begin('expire', 'store'),
      );
    }
    sweepTimer = clock.setTimer(now + Math.min(passivateAfterMs, 60_000), sweep);
  };
  let sweepTimer = clock.setTimer(clock.now() + Math.min(passivateAfterMs, 60_000), sweep);

  /** Resolves true once no work is in flight, or false when `ms` pass first (on the runtime's clock). */
  const drainedWithin = (ms: number): Promise<boolean> => {
    if (tracker.active === 0) return Promise.resolve(true);
    if (!Number.isFinite(ms)) return tracker.drained().then(() => true);
    return new Promise((resolve) => {
      const timer = clock.setTimer(clock.now() + Math.max(0, ms), () => resolve(false));
      void tracker.drained().then(() => {
        clock.clearTimer(timer);
        resolve(true);
      });
    });
  };

  const reject = (error: TroupeError): SendResult => {
    logger.warn({ err: error }, error.message);
    errors$.next(error);
    return { accepted: false, error };
  };

  // Observers see every outcome; the channel actor that routed a reply applies it itself.
  const outcomeSubscription = routing.outcomes$.subscribe((outcome) => {
    if (inspecting()) inspect({ type: 'routing.outcome', at: outcome.at, outcome });
    // Every failed delivery is also an error (an empty response is nothing to send, not a fault).
    if (outcome.error && outcome.error.code !== 'TROUPE_RESPONSE_EMPTY') {
      errors$.next(
        new TroupeError(outcome.error.code, outcome.error.message, {
          retryable: outcome.error.retryable,
          details: { channel: outcome.channel, idempotencyKey: outcome.idempotencyKey },
        }),
      );
    }
  });

  /** The outcome of a response the runtime routed itself (resent after a restart, or sent as is). */
  const settleInChannel = (outcome: RoutingOutcome) => {
    const key = channelKey(outcome.channel);
    let actor = registry.get(key);
    // A reply resent after a restart settles its turn in a channel that may not be loaded yet.
    if (!actor && outcome.origin.kind === 'answer' && !stopping) actor = activate(outcome.channel);
    if (!actor) {
      // A lease taken only to resend (a notice) is given back.
      void leases?.release(key).catch(() => undefined);
      return;
    }
    actor.onOutcome(outcome);
    retireIfFinished(actor);
  };

  /**
   * Whether this runtime may resend an unsettled entry after a restart: only when it can take the
   * channel's lease, so a reply another live process is still sending is not sent twice.
   */
  const mayResend = async (entry: OutboxEntry): Promise<boolean> => {
    const key = channelKey(entry.response.channel);
    if (leases?.holds(key)) return true;
    try {
      const holder = await leases?.acquire(key);
      if (holder)
        logger.info({ channel: key, owner: holder.owner }, 'not resending: another process has the channel');
      return holder === undefined;
    } catch {
      return false;
    }
  };

  const send = (input: unknown): SendResult => {
    if (stopping)
      return reject(
        new TroupeError('TROUPE_RUNTIME_STOPPED', 'The runtime is stopping and accepts no more events.'),
      );
    let parsed: ReturnType<typeof parseRuntimeEvent>;
    try {
      parsed = parseRuntimeEvent(input);
    } catch (error) {
      // A getter or Proxy trap that throws: the event cannot be read, so it is refused, not thrown.
      // What it threw may be as hostile (a Proxy, a throwing toString), so only a plain copy is kept.
      const cause = plainError(error);
      return reject(
        new TroupeError(
          'TROUPE_EVENT_INVALID',
          `Rejected an event that could not be read (${cause.message}); send plain data.`,
          { cause },
        ),
      );
    }
    if (!parsed.success) {
      const type = typeOf(input);
      return reject(
        new TroupeError(
          'TROUPE_EVENT_INVALID',
          `Rejected ${typeof type === 'string' ? `a "${type}"` : 'an'} event: ${parsed.error.issues
            .map((i) => `${i.path.join('.') || '(event)'}: ${i.message}`)
            .join('; ')}`,
          { details: { type } },
        ),
      );
    }
    const event = parsed.data as RuntimeEvent;
    const at = event.at ?? clock.now();
    if (event.type === 'response.send') {
      // Upstream already decided: preparation leaves it alone and routing sends it.
      const response = prepareOutgoingResponse({
        existing: event.response,
        request: {
          idempotencyKey: event.response.idempotencyKey,
          channel: event.response.channel,
          origin: {},
          voicePolicy: { mode: 'off' },
          at,
        },
      });
      // Validated on the way in (the event schema holds the response schema).
      if (response)
        tracker.track(
          routing.routePrepared(response, settleInChannel),
          tracker.begin('send', 'transport', channelKey(response.channel)),
        );
      return { accepted: true };
    }
    if (
      (event.type === 'avatar.summon' || event.type === 'avatar.dismiss') &&
      !avatarsById.has(event.avatarId)
    ) {
      return reject(
        new TroupeError(
          'TROUPE_AVATAR_UNKNOWN',
          `No avatar has id "${event.avatarId}"; known ids: ${[...avatarsById.keys()].join(', ')}.`,
        ),
      );
    }
    const actor = activate(event.channel);
    // The parsed event is the runtime's own copy: stamped in place.
    event.at = at;
    actor.receive(event as RuntimeEvent & { at: number });
    retireIfFinished(actor);
    return { accepted: true };
  };

  tracker.track(
    persistence
      .wakeups()
      .then((due) => {
        for (const w of due) wakeups.schedule(w.key, w.wakeAt);
      })
      .catch((error: unknown) => {
        const failure = new TroupeError(
          'TROUPE_STORE_UNAVAILABLE',
          'Could not read channel wake-ups from the store.',
          {
            retryable: true,
            cause: error,
          },
        );
        logger.error({ err: failure }, failure.message);
        errors$.next(failure);
      }),
    tracker.begin('wakeups', 'store'),
  );

  if (options.recoverOnStart ?? true) {
    tracker.track(
      routing.recover(settleInChannel, leases ? mayResend : undefined).catch((error: unknown) => {
        const failure = new TroupeError(
          'TROUPE_OUTBOX_UNAVAILABLE',
          'Could not read the outbox to resend unsettled responses.',
          {
            retryable: true,
            cause: error,
          },
        );
        logger.error({ err: failure }, failure.message);
        errors$.next(failure);
        return [];
      }),
      tracker.begin('recovery', 'recovery'),
    );
  }

  return {
    send,
    connect(events$) {
      return events$.subscribe({
        next: (event) => {
          send(event);
        },
        error: (error: unknown) =>
          reject(
            // The stream's source may fail with anything, a Proxy included: keep a plain copy.
            new TroupeError('TROUPE_STREAM_FAILED', 'An inbound event stream failed and was disconnected.', {
              cause: plainError(error),
            }),
          ),
      });
    },
    outcomes$: routing.outcomes$.asObservable(),
    inspection$: inspection$.asObservable(),
    errors$: errors$.asObservable(),
    avatars,
    model,
    store,
    view: (channel) => registry.get(channelKey(channel))?.view(),
    async open(channel) {
      if (stopping)
        throw new TroupeError('TROUPE_RUNTIME_STOPPED', 'The runtime is stopping and opens no channels.');
      const actor = activate(channel);
      await actor.whenReady();
      return actor.view() as FloorView;
    },
    activeChannels: () => [...registry.keys()],
    whenIdle: () => tracker.drained(),
    get inFlight() {
      return tracker.active;
    },
    pending: () => tracker.pending(),
    onProgress: (listener) => tracker.onProgress(listener),
    stop(stopOptions: StopOptions = {}) {
      stopping ??= (async () => {
        const deadlineMs = stopOptions.deadlineMs ?? options.stopDeadlineMs ?? DEFAULT_STOP_DEADLINE_MS;
        if (!(await drainedWithin(deadlineMs))) {
          const reason = new TroupeError(
            'TROUPE_RUNTIME_STOPPED',
            `The runtime stopped with work still in flight after ${deadlineMs} ms; replies not sent stay in the outbox and are sent on the next start.`,
            { retryable: true },
          );
          logger.warn({ err: reason, inFlight: tracker.active, deadlineMs }, reason.message);
          routing.abandon();
          for (const key of registry.keys()) registry.get(key)?.cancelTurns(reason);
          // Let what the aborts unwind finish (outbox notes, turns giving up) before writing.
          await Promise.race([tracker.drained(), new Promise((resolve) => setImmediate(resolve))]);
        }
        clock.clearTimer(sweepTimer);
        wakeups.dispose();
        for (const key of registry.keys()) {
          const actor = registry.get(key);
          if (actor?.ready) persistence.markDirty(key, actor);
        }
        await persistence.flush(undefined, { compact: true }).catch(() => undefined);
        persistence.dispose();
        await leases?.dispose().catch(() => undefined);
        await relationships.flush().catch(() => undefined);
        relationships.dispose();
        for (const key of registry.stopAll())
          inspect({ type: 'actor.stopped', at: clock.now(), channelKey: key, reason: 'runtime-stopped' });
        outcomeSubscription.unsubscribe();
        inspection$.complete();
        errors$.complete();
        routing.outcomes$.complete();
      })();
      return stopping;
    },
  };
}

/**
 * Which waits leave the process, from the ports in use: the runtime knows its own (the offline
 * model; memory and SQLite stores); any other port counts as external unless it says it is `local`.
 */
function externalWaits(options: ResolvedRuntimeOptions): ExternalWait {
  const { model, store } = options;
  const modelLocal = model.local ?? model.offline;
  const storeLocal = store.local ?? (store.kind === 'memory' || store.kind === 'sqlite');
  const localKinds = new Set((options.transports ?? []).filter((t) => t.local === true).map((t) => t.kind));
  const allTransportsLocal = (options.transports ?? []).every((t) => t.local === true);
  const speechLocal = options.speech === undefined || options.speech.local === true;
  const lookupLocal = options.lookup?.tool.local === true;
  return (wait, channel) => {
    switch (wait) {
      case 'model':
        return !modelLocal;
      case 'store':
        return !storeLocal;
      case 'lookup':
        return !lookupLocal;
      case 'speech':
        return !speechLocal;
      case 'transport':
        // A delivery records in the outbox, may speak, and sends.
        return (
          !storeLocal ||
          !speechLocal ||
          channel === undefined ||
          !localKinds.has(channelFromKey(channel).kind)
        );
      case 'recovery':
        return !storeLocal || !speechLocal || !allTransportsLocal;
    }
  };
}

/** The channel a key (`kind:id`) names. */
export function channelFromKey(key: string): ChannelRef {
  const split = key.indexOf(':');
  const kind = key.slice(0, split);
  return {
    kind: kind.includes('%') ? kind.replace(/%(?:25|3A)/gu, (m) => (m === '%25' ? '%' : ':')) : kind,
    id: key.slice(split + 1),
  };
}

/** Inspection events of one type, typed. */
export function inspectionOf<T extends InspectionEvent['type']>(
  stream: Observable<InspectionEvent>,
  type: T,
): Observable<Extract<InspectionEvent, { type: T }>> {
  return stream.pipe(filter((e): e is Extract<InspectionEvent, { type: T }> => e.type === type));
}

/** An event's `type`, if it can be read safely (for the error message). */
function typeOf(input: unknown): string | undefined {
  try {
    const type = typeof input === 'object' && input !== null ? (input as { type?: unknown }).type : undefined;
    // Only text goes into the error: any other value may throw when a logger or handler reads it.
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined;
  }
}
