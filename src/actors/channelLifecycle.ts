import { randomUUID } from 'node:crypto';
import type { Subscription } from 'rxjs';
import { DEFAULT_MAX_REPLY_CHARS } from '../config/replySettings.js';
import type { TimerHandle } from '../ports/clock.js';
import type { OutboxEntry } from '../ports/outbox.js';
import type { ChannelRef } from '../ports/outgoingResponse.js';
import type { RoutingOutcome } from '../ports/routingOutcome.js';
import { TroupeError } from '../ports/troupeError.js';
import type { AvatarDefinition } from './avatarDefinition.js';
import { ChannelActor, type ChannelActorDeps, speakerOf } from './channelActor.js';
import { ChannelHandover } from './channelHandover.js';
import { channelFromKey, channelKey } from './channelKey.js';
import { ChannelLeases, DEFAULT_LEASE_TTL_MS, leaseOwner } from './channelLeases.js';
import { LEDGER } from './channelLedger.js';
import { ChannelLoader } from './channelLoader.js';
import { CHANNELS, ChannelPersistence } from './channelPersistence.js';
import type { RuntimeEvent } from './runtimeEvents.js';
import type { RuntimeWiring } from './runtimeWiring.js';
import { WakeupScheduler } from './wakeupScheduler.js';

/** Idle channel state older than this is deleted from the store (two weeks), unless set. */
const DEFAULT_IDLE_EXPIRY_MS = 14 * 24 * 3_600_000;
/** How often idle channel state is expired. */
const EXPIRY_EVERY_MS = 3_600_000;

/**
 * The life of the runtime's channel actors: activated (loaded, under a lease when the store is
 * shared) by the first event for their channel, retired when nothing is left in them, passivated
 * to the store when idle and woken again at a stored deadline, and written out when the runtime
 * stops. It also settles the outcomes of responses the runtime routed itself.
 */
export class ChannelLifecycle {
  readonly persistence: ChannelPersistence;
  /** Processes sharing a durable store take turns per channel (one writer each): see ChannelLeases. */
  readonly leases: ChannelLeases | undefined;
  /** With leases: the events of channels another process holds are stored for it (see ChannelHandover). */
  readonly handover: ChannelHandover | undefined;
  /** Events whose sender asked for the channel's ownership: refused, never handed over. */
  private readonly mustOwn = new WeakSet<RuntimeEvent>();
  private readonly loader: ChannelLoader;
  /**
   * The cast as turns need it, shared by every turn (frozen: responses carry them); its fields are
   * replaced when an avatar is created or forgotten.
   */
  private readonly cast: Mutable<ChannelActorDeps['cast']>;
  private readonly castChanges: Subscription;
  private readonly maxReplyChars: number;
  private readonly passivateAfterMs: number;
  private readonly idleExpiryMs: number;
  /** Passivated channels with a deadline (a thread TTL, a follow-up) are woken up when it comes. */
  private readonly wakeups: WakeupScheduler;
  private sweepTimer: TimerHandle;
  private lastExpiry = Number.NEGATIVE_INFINITY;

  constructor(private readonly wiring: RuntimeWiring) {
    const { options, cast, clock, logger, store, durable, registry, inspect, tracker, errors$ } = wiring;
    this.passivateAfterMs = options.persistence?.passivateAfterMs ?? 10 * 60_000;
    this.idleExpiryMs = options.persistence?.idleExpiryMs ?? DEFAULT_IDLE_EXPIRY_MS;
    this.maxReplyChars = options.maxReplyChars ?? DEFAULT_MAX_REPLY_CHARS;
    this.persistence = new ChannelPersistence({
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
      history: wiring.unfolded ? { unfolded: wiring.unfolded, store: store.history } : undefined,
      onError: (error) => errors$.next(error),
      onTimedFlush: (done) => tracker.track(done, tracker.begin('write', 'store')),
      // Another process wrote this channel: drop ours; the next event loads theirs.
      onConflict: (key) => {
        if (registry.stop(key))
          inspect({ type: 'actor.stopped', at: clock.now(), channelKey: key, reason: 'conflict' });
        void this.leases?.release(key);
      },
    });
    this.leases = durable
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
          onRenewal: (done) => tracker.track(done, tracker.begin('write', 'store')),
        })
      : undefined;
    this.handover = this.leases ? this.createHandover(this.leases) : undefined;
    this.loader = new ChannelLoader({
      avatars: cast.list,
      roster: () => cast.roster,
      config: wiring.config,
      clock,
      logger,
      documents: store.documents,
      persistence: this.persistence,
      history: wiring.unfolded ? { unfolded: wiring.unfolded, store: store.history } : undefined,
      leases: this.leases,
      handover: this.handover,
      errors$,
      spendGate: wiring.spendGate,
      ready: wiring.loadedAtStart,
    });
    this.cast = castForTurns(cast.list);
    this.castChanges = cast.changes$.subscribe(() => this.castChanged());
    this.wakeups = new WakeupScheduler(clock, (key) => {
      if (wiring.stopping || registry.get(key)) return;
      this.activate(channelFromKey(key));
    });
    this.sweepTimer = clock.setTimer(clock.now() + Math.min(this.passivateAfterMs, 60_000), this.sweep);
  }

  /** An avatar was created or forgotten: turns and every live floor take the cast as it is now. */
  private castChanged(): void {
    const { cast, registry } = this.wiring;
    Object.assign(this.cast, castForTurns(cast.list));
    for (const key of registry.keys()) registry.get(key)?.useRoster(cast.roster);
  }

  /** The channel's actor, activated (and its state loaded) if it is not active. */
  activate(channel: ChannelRef): ChannelActor {
    const { registry, inspect, clock, tracker } = this.wiring;
    const key = channelKey(channel);
    const { actor, created } = registry.activate(key, () => this.createActor(channel, key));
    if (created) {
      inspect({ type: 'actor.activated', at: clock.now(), channelKey: key });
      tracker.track(
        actor
          .start(() => this.loader.start(key, channel))
          .then(
            () => this.handover?.settle(key).catch(() => undefined), // the next poll removes them
            (error: unknown) => this.failedToStart(actor, key, error),
          ),
        tracker.begin('load', 'store', key),
      );
    }
    return actor;
  }

  /** Stops the actor when nothing is left in its channel, writing its state compacted. */
  readonly retireIfFinished = (actor: ChannelActor): void => {
    const { registry, tracker, inspect, clock } = this.wiring;
    // A retired actor's late outcome (a reply it sent before it was dropped) must not stop the
    // actor that has taken the channel since.
    if (registry.get(actor.key) !== actor || !actor.isFinished()) return;
    registry.stop(actor.key);
    const key = actor.key;
    tracker.track(
      this.persistence
        .compact(key, actor)
        .catch(() => undefined)
        .then(() => (registry.get(key) ? undefined : this.leases?.release(key))),
      tracker.begin('write', 'store', key),
    );
    inspect({ type: 'actor.stopped', at: clock.now(), channelKey: actor.key, reason: 'finished' });
  };

  /** The outcome of a response the runtime routed itself (resent after a restart, or sent as is). */
  readonly settle = (outcome: RoutingOutcome): void => {
    const key = channelKey(outcome.channel);
    let actor = this.wiring.registry.get(key);
    // A reply resent after a restart settles its turn in a channel that may not be loaded yet.
    if (!actor && outcome.origin.kind === 'answer' && !this.wiring.stopping)
      actor = this.activate(outcome.channel);
    if (!actor) {
      // A lease taken only to resend (a notice) is given back.
      void this.leases?.release(key).catch(() => undefined);
      return;
    }
    actor.onOutcome(outcome);
    this.retireIfFinished(actor);
  };

  /**
   * Whether this runtime may resend an unsettled entry after a restart: only when it can take the
   * channel's lease, so a reply another live process is still sending is not sent twice.
   */
  readonly mayResend = async (entry: OutboxEntry): Promise<boolean> => {
    const key = channelKey(entry.response.channel);
    if (this.leases?.holds(key)) return true;
    try {
      const holder = await this.leases?.acquire(key);
      if (holder)
        this.wiring.logger.info(
          { channel: key, owner: holder.owner },
          'not resending: another process has the channel',
        );
      return holder === undefined;
    } catch {
      return false;
    }
  };

  /** Schedules the wake-ups stored by channels passivated before this start. */
  scheduleStoredWakeups(): void {
    const { tracker, logger, errors$ } = this.wiring;
    tracker.track(
      this.persistence
        .wakeups()
        .then((due) => {
          for (const w of due) this.wakeups.schedule(w.key, w.wakeAt);
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
  }

  /** Resends the outbox entries left unsettled by an earlier run (of channels this runtime may take). */
  resendUnsettled(): void {
    const { tracker, routing, logger, errors$ } = this.wiring;
    tracker.track(
      routing.recover(this.settle, this.leases ? this.mayResend : undefined).catch((error: unknown) => {
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

  /**
   * Stops the sweep and the wake-ups, writes every loaded channel compacted and gives the leases
   * back (the runtime is stopping; its actors are stopped afterwards).
   */
  async close(): Promise<void> {
    const { clock, registry } = this.wiring;
    clock.clearTimer(this.sweepTimer);
    this.castChanges.unsubscribe();
    this.wakeups.dispose();
    this.handover?.dispose();
    for (const key of registry.keys()) {
      const actor = registry.get(key);
      if (actor?.ready) this.persistence.markDirty(key, actor);
    }
    await this.persistence.flush(undefined, { compact: true }).catch(() => undefined);
    this.persistence.dispose();
    await this.leases?.dispose().catch(() => undefined);
  }

  /** Marks an event whose sender asked for the channel's ownership: refused if another process holds it. */
  requireOwnership(event: RuntimeEvent): void {
    this.mustOwn.add(event);
  }

  private createHandover(leases: ChannelLeases): ChannelHandover {
    const { wiring } = this;
    const ttlMs = wiring.options.persistence?.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
    return new ChannelHandover({
      documents: wiring.store.documents,
      clock: wiring.clock,
      logger: wiring.logger.child({ actor: 'handover' }),
      errors$: wiring.errors$,
      tracker: wiring.tracker,
      pollEveryMs: Math.floor(ttlMs / 3),
      holds: (key) => leases.holds(key),
      leasesHeld: () => leases.heldCount,
      actor: (key) => wiring.registry.get(key),
      activate: (key) => {
        const channel = channelFromKey(key);
        // Events a process elsewhere took for a channel no transport here serves wait for one that does.
        if (!wiring.stopping && wiring.routing.servesChannel(channel)) this.activate(channel);
      },
      flush: (key) => this.persistence.flush([key]),
      learnAvatars: (events) => this.learnAvatars(events),
      stopping: () => wiring.stopping !== undefined,
    });
  }

  /**
   * Reads the avatars created by summoning again when a handed-over summon or dismissal names one
   * this runtime does not know: another process created it (the event was accepted there).
   */
  private async learnAvatars(events: readonly RuntimeEvent[]): Promise<void> {
    const { cast, creator, logger } = this.wiring;
    const unknown = events.some(
      (e) => (e.type === 'avatar.summon' || e.type === 'avatar.dismiss') && !cast.byId.has(e.avatarId),
    );
    if (!unknown) return;
    await creator.load().catch((error: unknown) => {
      logger.warn({ err: error }, 'could not read the avatars other processes created');
    });
  }

  private createActor(channel: ChannelRef, key: string): ChannelActor {
    const { cast, config, clock, executor, routing, tracker, logger, inspect, inspecting } = this.wiring;
    return new ChannelActor({
      channel,
      key,
      avatars: cast.byId,
      hasResidents: this.loader.hasResidents(key),
      config,
      clock,
      executor,
      routing,
      tracker,
      logger,
      inspect,
      inspecting,
      cast: this.cast,
      afterOutcome: this.retireIfFinished,
      onError: (error) => this.wiring.errors$.next(error),
      maxReplyChars: this.maxReplyChars,
      persistence: this.persistence,
      outbox: this.wiring.store.outbox,
      durable: this.wiring.durable,
    });
  }

  private failedToStart(actor: ChannelActor, key: string, error: unknown): void {
    const { registry, logger, errors$, inspect, clock } = this.wiring;
    if (TroupeError.isInstance(error) && error.code === 'TROUPE_CHANNEL_OWNED') {
      // Another runtime has the channel: its events here are handed over to it (those that asked
      // for ownership are refused), and the next event after its lease lapses tries again.
      const waiting = actor.discardWaiting();
      if (registry.get(key) === actor) registry.stop(key);
      const holder = error.details as { owner?: unknown; expiresAt?: unknown } | undefined;
      if (typeof holder?.owner === 'string' && typeof holder.expiresAt === 'number')
        this.handover?.noteHolder(key, { owner: holder.owner, expiresAt: holder.expiresAt });
      const refused = waiting.filter((event) => this.mustOwn.has(event));
      this.handover?.handOver(
        key,
        waiting.filter((event) => !this.mustOwn.has(event)),
      );
      inspect({ type: 'actor.stopped', at: clock.now(), channelKey: key, reason: 'conflict' });
      if (refused.length === 0) {
        logger.info(
          { channel: key, handedOver: waiting.length, reason: error.message },
          'another process holds the channel; its events are handed over',
        );
        return;
      }
      const failure = new TroupeError(error.code, error.message, {
        retryable: true,
        details: { ...error.details, refusedEvents: refused.length },
      });
      logger.warn({ channel: key, err: failure }, failure.message);
      errors$.next(failure);
      return;
    }
    logger.error({ channel: key, err: error }, 'channel failed to start');
  }

  private async passivate(actor: ChannelActor): Promise<void> {
    const { registry, inspect, clock } = this.wiring;
    await this.persistence.compact(actor.key, actor);
    // Something may have arrived while writing.
    if (!actor.canPassivate() || registry.get(actor.key) !== actor || this.persistence.isDirty(actor.key))
      return;
    const wakeAt = actor.wakeAt();
    registry.stop(actor.key);
    await this.leases?.release(actor.key);
    if (wakeAt !== undefined) this.wakeups.schedule(actor.key, wakeAt);
    inspect({ type: 'actor.stopped', at: clock.now(), channelKey: actor.key, reason: 'passivated' });
  }

  /** Passivates the channels idle for long enough and, every hour, expires idle stored state. */
  private readonly sweep = (): void => {
    const { clock, registry, tracker } = this.wiring;
    if (this.wiring.stopping) return;
    const now = clock.now();
    for (const key of [...registry.keys()]) {
      const actor = registry.get(key);
      if (actor?.canPassivate() && now - actor.lastActivityAt >= this.passivateAfterMs)
        tracker.track(
          this.passivate(actor).catch(() => undefined),
          tracker.begin('passivate', 'store', key),
        );
    }
    if (now - this.lastExpiry >= EXPIRY_EVERY_MS) {
      this.lastExpiry = now;
      this.expireIdle(now);
    }
    this.refreshUsage(now);
    this.refreshAvatars();
    this.sweepTimer = clock.setTimer(now + Math.min(this.passivateAfterMs, 60_000), this.sweep);
  };

  /**
   * With daily caps on a store other processes share, reads the day's stored usage again: their
   * calls count against the totals here within a sweep (a minute at most), and a new UTC day starts
   * from what is stored.
   */
  private refreshUsage(now: number): void {
    const { usage, spendGate, durable, logger } = this.wiring;
    if (!usage || !spendGate || !durable) return;
    usage
      .load(now)
      .catch((error: unknown) => logger.warn({ err: error }, "today's stored usage could not be read again"));
  }

  /**
   * On a store other processes may share, reads the avatars summoning created again: one another
   * process created joins the floors here, and one it forgot leaves them, within a sweep.
   */
  private refreshAvatars(): void {
    const { creator, durable, logger } = this.wiring;
    if (!durable) return;
    creator
      .load()
      .catch((error: unknown) => logger.warn({ err: error }, 'the created avatars could not be read again'));
  }

  private expireIdle(now: number): void {
    const { store, tracker, logger, usage } = this.wiring;
    tracker.track(
      Promise.all([
        store.documents.expireIdle(CHANNELS, now - this.idleExpiryMs),
        // A channel's ledger is written no earlier than its snapshot: it expires with it.
        store.documents.expireIdle(LEDGER, now - this.idleExpiryMs),
        usage?.expire?.(now),
        store.outbox.expire?.(now),
      ])
        .then(([n, , buckets, settled]) => {
          if (n > 0) logger.info({ expired: n }, 'expired idle channel state');
          if (buckets) logger.info({ expired: buckets }, 'expired old usage buckets');
          if (settled) logger.info({ expired: settled }, 'expired old settled outbox entries');
        })
        .catch((error: unknown) =>
          logger.warn({ err: error }, 'old state could not be expired; the next sweep tries again'),
        ),
      tracker.begin('expire', 'store'),
    );
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Ids, names, speakers and voice policies of the avatars, as turns read them. */
function castForTurns(avatars: readonly AvatarDefinition[]): Mutable<ChannelActorDeps['cast']> {
  return {
    avatarIds: avatars.map((a) => a.id),
    avatarNames: avatars.flatMap((a) => [a.name, ...(a.aliases ?? [])]),
    speakers: new Map(avatars.map((a) => [a.id, Object.freeze(speakerOf(a))])),
    speakerNames: new Map(avatars.map((a) => [a.id, Object.freeze([a.name, ...(a.aliases ?? [])])])),
    voicePolicies: new Map(avatars.map((a) => [a.id, Object.freeze({ mode: a.voice })])),
  };
}
