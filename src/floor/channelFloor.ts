import type { CoordinationConfig } from '../config/coordinationConfig.js';
import type { SpendGate } from './caps.js';
import { nextDeadline } from './deadlines.js';
import type { FloorEngineName } from './floorEngine.js';
import { createFloorSetup, type FloorSetup, useSharedRoster } from './floorSetup.js';
import { type FloorSnapshot, FloorSnapshotError } from './floorSnapshotSchema.js';
import { restoreFloorState, snapshotOf } from './floorSnapshots.js';
import { createFloorState, type FloorState } from './floorState.js';
import type { AvatarProfile, FloorEffect, FloorEvent } from './floorTypes.js';
import { type FloorView, viewOf } from './floorView.js';
import { handleEvent } from './handleEvent.js';
import { ensurePresence } from './presences.js';
import { readFloorSnapshot } from './readFloorSnapshot.js';

export type { FloorView } from './floorView.js';

/**
 * The snapshot {@link ChannelFloor.restore} is building a floor from, handed to the constructor it
 * calls (synchronously), so a restored floor builds its state once instead of an empty one first.
 */
let restoring: FloorSnapshot | undefined;

/** How a channel floor is created. */
export interface ChannelFloorOptions {
  channelId: string;
  config: CoordinationConfig;
  /**
   * Every avatar the channel knows (for mention matching); `present` says who is in the room.
   * Treated as immutable: floors given the same array share its lookup maps and mention matcher.
   */
  roster: readonly AvatarProfile[];
  /** Avatar ids present when the floor starts (residents). */
  present?: string[];
  /** Start time; defaults to 0 and moves forward with events. */
  at?: number;
  /**
   * How presences and threads are stepped: `compiled` (default) runs the machines' own
   * transitions, guards and assigns as plain functions; `xstate` steps real xstate snapshots.
   * Both decide identically (tested); `xstate` is there to check that and to inspect with xstate.
   */
  engine?: FloorEngineName;
  /**
   * The caps kept outside the channel (an avatar's or everyone's tokens and cost per UTC day):
   * asked before every turn. The channel's own cap (avatar messages per hour) is the floor's.
   */
  spendGate?: SpendGate | undefined;
  /**
   * Names this floor's lifetime (turn ids restart with a fresh floor; idempotency keys combine
   * both). Kept across snapshots. Default `"0"`.
   */
  epoch?: string;
}

/**
 * The channel floor: for every message it decides which avatars answer, by the
 * response ladder, and records the rung and reason of each decision and why other candidates were
 * suppressed. It owns the channel's presences and threads as machine states (data, not running
 * actors) and steps only the ones an event touches.
 *
 * Budgets are anchored to the latest human message: `MAX_RESPONSES_PER_MESSAGE` answers to it
 * (main lane) and `BOT_MENTION_CASCADE_LIMIT` answers to avatars' messages after it (cascade
 * lane). An avatar's message never opens a budget, so bot-to-bot loops cannot happen.
 *
 * A turn is claimed, then generated, then delivered (consumed); a failed or aborted turn releases
 * its claim and gives its budget back. Deterministic and free of I/O: time comes only from
 * `event.at`, and the driver sends `tick` at {@link ChannelFloor.nextDeadline}.
 *
 * A thin shell: everything the floor knows is one `FloorState` record (what {@link snapshot}
 * stores), and the rules are functions over it in `src/floor/` — the ladder, threads,
 * budgets, claims, the turns it owes (follow-ups, greetings, deferred answers), deadlines.
 */
export class ChannelFloor {
  readonly channelId: string;
  /** See {@link ChannelFloorOptions.epoch}. */
  readonly epoch: string;
  private readonly setup: FloorSetup;
  private state: FloorState;

  constructor(options: ChannelFloorOptions) {
    const data = restoring;
    restoring = undefined;
    this.channelId = options.channelId;
    this.epoch = data ? data.epoch : (options.epoch ?? '0');
    this.setup = createFloorSetup(options.config, options.roster, options.engine, options.spendGate);
    if (data) {
      this.state = restoreFloorState(data, this.setup);
      return;
    }
    this.state = createFloorState(this.channelId, this.epoch, options.at ?? 0);
    for (const id of options.present ?? [])
      if (this.setup.roster.has(id)) ensurePresence(this.state, this.setup, id, this.state.now);
  }

  /** Applies one event and returns its effects, in order. Never throws for bad input. */
  handle(event: FloorEvent): FloorEffect[] {
    return handleEvent(this.state, this.setup, event);
  }

  /** Earliest time at which a `tick` would change something, or undefined when nothing is due. */
  nextDeadline(): number | undefined {
    return nextDeadline(this.state);
  }

  /** The floor's time: that of the last event it handled (a snapshot's `now`). */
  snapshotTime(): number {
    return this.state.now;
  }

  /** The avatar of a granted turn that is neither delivered nor released (undefined: none such). */
  speakerOf(turnId: string): string | undefined {
    return this.state.inFlight.get(turnId)?.avatarId;
  }

  /** True while a granted turn is neither delivered nor released. */
  hasTurnsInFlight(): boolean {
    return this.state.inFlight.size > 0;
  }

  /**
   * The whole floor as plain JSON, for a store. Restore it with {@link ChannelFloor.restore}.
   * Roster and configuration are not included: they come from the runtime on restore.
   */
  snapshot(): FloorSnapshot {
    return snapshotOf(this.state);
  }

  /**
   * A floor from a {@link ChannelFloor.snapshot} (a version-1 document is migrated first), with
   * today's roster and configuration. Avatars no longer in the roster are dropped with their turns.
   * Presence settings follow the current configuration.
   * @throws FloorSnapshotError (`TROUPE_SNAPSHOT_INVALID`) for a foreign, newer or damaged snapshot.
   */
  static restore(
    snapshot: unknown,
    options: Omit<ChannelFloorOptions, 'present' | 'at' | 'epoch'>,
  ): ChannelFloor {
    const data = readFloorSnapshot(snapshot, options.channelId);
    if (data.channelId !== options.channelId)
      throw new FloorSnapshotError(options.channelId, `it belongs to channel ${data.channelId}`);
    restoring = data;
    try {
      // The constructor takes the state, epoch and time from `restoring`, not from options.
      return new ChannelFloor(options);
    } catch (error) {
      throw new FloorSnapshotError(options.channelId, error instanceof Error ? error.message : String(error));
    } finally {
      restoring = undefined;
    }
  }

  /**
   * Takes the runtime's roster as it is now (an avatar was created or forgotten). An avatar no
   * longer in it is dropped with its presence and turns, as a restore would; returns whether any
   * avatar was dropped.
   */
  useRoster(roster: readonly AvatarProfile[]): boolean {
    const kept = new Set(roster.map((a) => a.id));
    const dropped = [...this.setup.roster.keys()].some((id) => !kept.has(id));
    useSharedRoster(this.setup, roster);
    if (dropped) this.state = restoreFloorState(snapshotOf(this.state), this.setup);
    return dropped;
  }

  /** A read-only picture of the floor. */
  view(): FloorView {
    return viewOf(this.state, this.setup);
  }
}
