import type { Clock, TimerHandle } from '../ports/clock.js';
import type { FloorEffect, FloorEvent, TurnClaim } from './floorTypes.js';

/** The part of a channel floor a {@link FloorDriver} drives (a `ChannelFloor`, or a stand-in in tests). */
export interface DrivenFloor {
  handle(event: FloorEvent): FloorEffect[];
  nextDeadline(): number | undefined;
}

/** The clock a driver arms its tick on: the runtime's clock, or a simulated one. */
export type FloorClock = Pick<Clock, 'now' | 'setTimer' | 'clearTimer'>;

/** A turn the floor took back, and why. */
export type TurnRelease = Extract<FloorEffect, { type: 'turn.released' }>;

/**
 * Whom a {@link FloorDriver} tells what happened. Methods, not closures, so a long-lived owner (the
 * channel actor, one per channel) can be its own hooks and costs no function objects per channel.
 */
export interface FloorDriverHooks {
  /** Every effect, in order, before the driver acts on it (transcripts, inspection, statistics). */
  onEffect?(effect: FloorEffect, event: FloorEvent): void;
  /** A turn was granted: generate and deliver it, then apply `turn.delivered` (or `turn.failed`). */
  onClaim?(turn: TurnClaim): void;
  /** A turn was taken back (dismissed, failed, aborted): stop working on it. */
  onRelease?(release: TurnRelease): void;
  /** An event was applied and the tick re-armed (persist the floor here). */
  onApplied?(event: FloorEvent, effects: readonly FloorEffect[]): void;
  /**
   * The floor's deadline stayed at `at` after three ticks there: the driver ticks 1 ms later
   * rather than spin at one instant (a floor bug; reported once per instant).
   */
  onStuckDeadline?(at: number): void;
}

/** What a {@link FloorDriver} drives and whom it tells. */
export interface FloorDriverOptions {
  floor: DrivenFloor;
  clock: FloorClock;
  /** `[threadId, avatarId, turns]` spoken so far (a restored channel's). */
  spoken?: Iterable<readonly [string, string, number]>;
  /** Whom to tell (none: the driver only applies events and keeps the tick armed). */
  hooks?: FloorDriverHooks;
}

const NO_HOOKS: FloorDriverHooks = {};

/** How many ticks at one instant a driver sends before it moves its tick on. */
const TICKS_AT_ONE_INSTANT = 3;

/**
 * Interprets a channel floor's effects, the one way the channel actor, the simulator and the
 * benchmarks all do: it applies events, hands claimed and released turns to its owner, keeps
 * count of the turns each avatar has spoken in each thread, and keeps exactly one timer armed at
 * the floor's {@link DrivenFloor.nextDeadline}, which applies a `tick` when it fires.
 *
 * Turns spoken in a thread count the turn that opened it: whoever's message (or delivered turn)
 * opened a thread has spoken in it once already; every delivered turn in a still-open thread
 * counts one more. A thread's counts are dropped when it ends.
 */
export class FloorDriver {
  private readonly spoken = new Map<string, number>();
  private tick: { handle: TimerHandle; due: number } | undefined;
  private lastTickAt: number | undefined;
  private ticksAtSameTime = 0;
  private reportedStuckAt: number | undefined;
  private stopped = false;

  private readonly floor: DrivenFloor;
  private readonly clock: FloorClock;
  private readonly hooks: FloorDriverHooks;

  constructor(options: FloorDriverOptions) {
    this.floor = options.floor;
    this.clock = options.clock;
    this.hooks = options.hooks ?? NO_HOOKS;
    for (const [threadId, avatarId, n] of options.spoken ?? [])
      this.spoken.set(spokenKey(threadId, avatarId), n);
  }

  /** Applies one event: reports and acts on its effects in order, then re-arms the tick. */
  apply(event: FloorEvent): FloorEffect[] {
    const { hooks } = this;
    const effects = this.floor.handle(event);
    // Whoever speaks in this event: an avatar's message, or the avatar whose turn was delivered.
    let speaker = event.type === 'message' && event.author.kind === 'avatar' ? event.author.id : undefined;
    for (const effect of effects) {
      hooks.onEffect?.(effect, event);
      switch (effect.type) {
        case 'turn.claimed':
          hooks.onClaim?.(effect.turn);
          break;
        case 'turn.released':
          hooks.onRelease?.(effect);
          break;
        case 'turn.consumed':
          if (event.type === 'turn.delivered' && effect.turnId === event.turnId) speaker = effect.avatarId;
          if (effect.threadId !== undefined) this.credit(effect.threadId, effect.avatarId);
          break;
        case 'thread.opened':
          if (speaker !== undefined) this.credit(effect.threadId, speaker);
          break;
        case 'thread.ended':
          // An ended thread's counts are never read again: without this they would pile up.
          this.forget(effect.threadId);
          break;
        default:
          break;
      }
    }
    this.armTick();
    hooks.onApplied?.(event, effects);
    return effects;
  }

  /** Turns the avatar has spoken in the thread (counting the message that opened it). */
  spokenInThread(threadId: string, avatarId: string): number {
    return this.spoken.get(spokenKey(threadId, avatarId)) ?? 0;
  }

  /** Every `[threadId, avatarId, turns]` count, for a store. */
  spokenCounts(): [string, string, number][] {
    const counts: [string, string, number][] = [];
    for (const [key, n] of this.spoken) {
      const [threadId = '', avatarId = ''] = key.split('\u0000');
      counts.push([threadId, avatarId, n]);
    }
    return counts;
  }

  /**
   * Arms the one tick timer at the floor's next deadline (or cancels it when nothing is due).
   * {@link apply} does this after every event; call it once when taking over a restored floor.
   */
  armTick(): void {
    if (this.stopped) return;
    let due = this.floor.nextDeadline();
    // A floor whose deadline does not move after a tick would spin forever at one instant (a
    // deadline already past fires now, so "now" is the instant it would spin at).
    const fires = due === undefined ? undefined : Math.max(due, this.clock.now());
    if (fires !== undefined && fires === this.lastTickAt && this.ticksAtSameTime >= TICKS_AT_ONE_INSTANT) {
      if (this.reportedStuckAt !== fires) {
        this.reportedStuckAt = fires;
        this.hooks.onStuckDeadline?.(fires);
      }
      due = fires + 1;
    }
    if (due === this.tick?.due) return;
    if (this.tick) this.clock.clearTimer(this.tick.handle);
    this.tick = undefined;
    if (due === undefined) return;
    const handle = this.clock.setTimer(due, () => this.onTick());
    this.tick = { handle, due };
  }

  /** Cancels the tick; the driver arms none afterwards. */
  stop(): void {
    this.stopped = true;
    if (this.tick) this.clock.clearTimer(this.tick.handle);
    this.tick = undefined;
  }

  private onTick(): void {
    this.tick = undefined;
    if (this.stopped) return;
    const now = this.clock.now();
    this.ticksAtSameTime = now === this.lastTickAt ? this.ticksAtSameTime + 1 : 1;
    this.lastTickAt = now;
    this.apply({ type: 'tick', at: now });
  }

  private forget(threadId: string): void {
    const prefix = `${threadId}\u0000`;
    for (const key of this.spoken.keys()) if (key.startsWith(prefix)) this.spoken.delete(key);
  }

  private credit(threadId: string, avatarId: string): void {
    const key = spokenKey(threadId, avatarId);
    this.spoken.set(key, (this.spoken.get(key) ?? 0) + 1);
  }
}

function spokenKey(threadId: string, avatarId: string): string {
  return `${threadId}\u0000${avatarId}`;
}
