import type { Subject } from 'rxjs';
import type { Logger } from '../logging/logger.js';
import type { Clock, TimerHandle } from '../ports/clock.js';
import type { DocumentStore } from '../ports/store.js';
import { describe, TroupeError } from '../ports/troupeError.js';
import type { LeaseHolder } from './channelLeases.js';
import { type HandedOverEvent, HandoverQueue } from './handoverQueue.js';
import type { RuntimeEvent } from './runtimeEvents.js';
import type { WorkTracker } from './workTracker.js';

type StampedEvent = RuntimeEvent & { at: number };

/** What {@link ChannelHandover} works with; the lifecycle supplies the channel side. */
export interface ChannelHandoverDeps {
  documents: DocumentStore;
  clock: Clock;
  logger: Logger;
  errors$: Subject<TroupeError>;
  tracker: WorkTracker;
  /** How often the queues are looked at while this runtime holds a lease or handed events over. */
  pollEveryMs: number;
  /** True while this runtime holds the channel's lease. */
  holds(key: string): boolean;
  /** How many leases this runtime holds. */
  leasesHeld(): number;
  /** The channel's actor, if one is active here; `ready` once its floor is loaded. */
  actor(key: string): { ready: boolean; receive(event: StampedEvent): void } | undefined;
  /** Activates the channel here (taking its lease, or handing its events over if that fails). */
  activate(key: string): void;
  /** Writes the channel's pending state (the ids of the messages it took) to the store. */
  flush(key: string): Promise<void>;
  /**
   * Called with waiting events before they are applied: reads the avatars other processes created
   * when one of them names an avatar this runtime does not know yet (never rejects).
   */
  learnAvatars?(events: readonly StampedEvent[]): Promise<void>;
  stopping(): boolean;
}

/**
 * Hands a channel's events to the process holding its lease instead of refusing them: they are
 * stored in the channel's {@link HandoverQueue}, in order, and the holder applies them when it
 * takes the channel and then at every poll (each third of the lease); once a process finds the
 * holder's lease lapsed, it takes the channel and its queue over. An event is removed from the
 * queue only after the state recording it is written, so a holder that dies mid-way leaves it for
 * the next one (which recognises a message it already has by its id).
 */
export class ChannelHandover {
  private readonly queue: HandoverQueue;
  /** Channels another process holds, as last seen: events for them are handed over at once. */
  private readonly elsewhere = new Map<string, LeaseHolder>();
  /** Per channel held here: the highest sequence number applied during this lease. */
  private readonly applied = new Map<string, number>();
  /** Per channel: this runtime's appends, one after the other (their order is the sender's). */
  private readonly appending = new Map<string, Promise<void>>();
  private timer: TimerHandle | undefined;
  private polling = false;
  private disposed = false;

  constructor(private readonly deps: ChannelHandoverDeps) {
    this.queue = new HandoverQueue(deps.documents);
  }

  /** True when another process holds the channel (its lease, as last seen, runs at `now`) and nothing is active here. */
  heldElsewhere(key: string, now: number): boolean {
    const holder = this.elsewhere.get(key);
    return holder !== undefined && holder.expiresAt > now && this.deps.actor(key) === undefined;
  }

  /** Notes who holds a channel this runtime could not take. */
  noteHolder(key: string, holder: LeaseHolder): void {
    this.elsewhere.set(key, holder);
    this.arm();
  }

  /**
   * Stores the channel's events for its holder, after this runtime's earlier ones. An event that
   * cannot be stored is reported on `errors$` (`TROUPE_CHANNEL_OWNED`, with `refusedEvents`).
   */
  handOver(key: string, events: readonly StampedEvent[]): void {
    if (events.length === 0) return;
    const { tracker, clock, logger, errors$ } = this.deps;
    const previous = this.appending.get(key) ?? Promise.resolve();
    const done = previous.then(async () => {
      let stored = 0;
      try {
        for (const event of events) {
          await this.queue.append(key, event, clock.now());
          stored++;
        }
        logger.debug({ channel: key, events: stored }, 'handed events over to the channel holder');
      } catch (error) {
        const failure = new TroupeError(
          'TROUPE_CHANNEL_OWNED',
          `Channel ${key} is handled by another process and ${events.length - stored} of its events could not be stored for it (${describe(error)}); they were refused.`,
          { retryable: true, cause: error, details: { channel: key, refusedEvents: events.length - stored } },
        );
        logger.warn({ channel: key, err: failure }, failure.message);
        errors$.next(failure);
      }
    });
    this.appending.set(key, done);
    void done.then(() => {
      if (this.appending.get(key) === done) this.appending.delete(key);
    });
    tracker.track(done, tracker.begin('write', 'store', key));
    this.arm();
  }

  /**
   * The channel's waiting events, once this runtime has taken its lease (after its own appends
   * are stored, so they come before the events that waited here): applied first by the actor.
   */
  async take(key: string): Promise<StampedEvent[]> {
    this.elsewhere.delete(key);
    await this.appending.get(key);
    this.applied.delete(key);
    const waiting = await this.queue.read(key);
    await this.deps.learnAvatars?.(waiting.map((e) => e.event));
    this.arm();
    return this.mark(key, waiting);
  }

  /** Removes the events applied during this lease once the channel's state recording them is written. */
  async settle(key: string): Promise<void> {
    const through = this.applied.get(key);
    if (through === undefined) return;
    await this.deps.flush(key);
    const emptied = await this.queue.removeThrough(key, through, this.deps.clock.now());
    // An emptied queue numbers its next event 1 again.
    if (emptied && this.applied.get(key) === through) this.applied.delete(key);
  }

  /** Stops polling. */
  dispose(): void {
    this.disposed = true;
    if (this.timer) this.deps.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  /** The events not applied yet, noted as applied. */
  private mark(key: string, waiting: readonly HandedOverEvent[]): StampedEvent[] {
    const after = this.applied.get(key) ?? 0;
    const fresh = waiting.filter((e) => e.seq > after);
    const last = fresh.at(-1);
    if (last) this.applied.set(key, last.seq);
    return fresh.map((e) => e.event);
  }

  /** One poll timer while this runtime holds a lease or waits for a holder to take its events. */
  private arm(): void {
    if (this.timer || this.disposed) return;
    const { clock } = this.deps;
    this.timer = clock.setTimer(clock.now() + this.deps.pollEveryMs, () => {
      this.timer = undefined;
      if (this.disposed || this.deps.stopping()) return;
      void this.poll().finally(() => {
        if (this.deps.leasesHeld() > 0 || this.elsewhere.size > 0) this.arm();
      });
    });
  }

  /**
   * Applies the events waiting for the channels held here, and takes the channels whose holder's
   * lease lapsed (or that nobody holds) while events wait for them.
   */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const waiting = await this.queue.waiting();
      await this.deps.learnAvatars?.([...waiting.values()].flatMap((events) => events.map((e) => e.event)));
      const now = this.deps.clock.now();
      for (const key of this.applied.keys()) if (!this.deps.holds(key)) this.applied.delete(key);
      for (const [key, holder] of this.elsewhere)
        if (holder.expiresAt <= now && !waiting.has(key)) this.elsewhere.delete(key);
      for (const [key, events] of waiting) this.pollChannel(key, events, now);
    } catch (error) {
      this.deps.logger.warn(
        { err: error },
        'could not read the hand-over queues; trying again at the next poll',
      );
    } finally {
      this.polling = false;
    }
  }

  private pollChannel(key: string, events: readonly HandedOverEvent[], now: number): void {
    const actor = this.deps.actor(key);
    if (actor && this.deps.holds(key)) {
      if (!actor.ready) return; // taking the channel applies them
      for (const event of this.mark(key, events)) actor.receive(event);
      const { tracker } = this.deps;
      tracker.track(
        this.settle(key).catch((error: unknown) =>
          this.deps.logger.warn(
            { channel: key, err: error },
            'could not remove handled events from the hand-over queue',
          ),
        ),
        tracker.begin('write', 'store', key),
      );
      return;
    }
    const holder = this.elsewhere.get(key);
    if (!actor && (!holder || holder.expiresAt <= now)) this.deps.activate(key);
  }
}
