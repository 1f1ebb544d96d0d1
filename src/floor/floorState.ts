import type { MachineState } from '../engine/compiledMachine.js';
import type { AvatarPresenceContext } from '../machines/avatarPresence.machine.js';
import type { ConversationThreadContext } from '../machines/conversationThread.machine.js';
import type { BudgetLane, Rung, ThreadOutcome, TurnClaim, TurnKind } from './floorTypes.js';

/** A presence as the floor keeps it: the presence machine's state, stepped as data. */
export type PresenceState = MachineState<AvatarPresenceContext>;

/** A thread as the floor keeps it: the thread machine's state, stepped as data. */
export type ThreadState = MachineState<ConversationThreadContext>;

/**
 * The budget of the latest human message: answers to it draw on `main`, answers to
 * avatars' messages after it on `cascade`. Before any human message there is no anchor and no budget.
 */
export interface Budget {
  anchorMessageId: string | undefined;
  main: number;
  cascade: number;
}

/**
 * A summoned avatar's follow-up, due a while after its greeting was delivered; then, if someone
 * reacted to it since it arrived, a second one, which answers them.
 */
export interface PendingFollowUp {
  avatarId: string;
  dueAt: number;
  anchorMessageId: string;
  summonerName: string;
  /** Set on the second follow-up. */
  second?: true | undefined;
}

/** A summoned avatar's arrival, and who reacted to it since (for its second follow-up). */
export interface Arrival {
  at: number;
  reactedBy?: { id: string; name: string } | undefined;
}

/** Everything a turn is claimed with; the claim itself adds its id, time and context. */
export interface ClaimSpec {
  avatarId: string;
  kind: TurnKind;
  rung: Rung;
  reason: string;
  lane: BudgetLane;
  anchorMessageId: string;
  triggerMessageId?: string | undefined;
  triggerText?: string | undefined;
  threadId?: string | undefined;
  addressedBy?: { id: string; name: string } | undefined;
  /** A greeting for an avatar summoned while already present. */
  alreadyPresent?: true | undefined;
}

/** How long a pair of avatars waits before another thread together. */
export interface ThreadBackoff {
  /** When the last thread between them ended. */
  endedAt: number;
  /** Threads that ended within the window of each other, minus one (the wait doubles per level). */
  level: number;
  /** No new thread between them before this. */
  until: number;
}

/** An answer owed by an avatar that was addressed while busy; claimed once it is free. */
export interface DeferredAnswer {
  spec: ClaimSpec;
  messageId: string;
}

/**
 * Everything a channel floor knows, as one record of plain data: what {@link ChannelFloor.snapshot}
 * stores (maps become lists of entries; see `floorSnapshotSchema`) and what the floor's functions
 * read and update. Configuration, roster and engine are not in it: they come from the runtime
 * (see `FloorSetup`).
 */
export interface FloorState {
  readonly channelId: string;
  /** Names this floor's lifetime: turn ids restart with a fresh floor. */
  readonly epoch: string;
  /** The latest time the floor has seen; time comes only from events. */
  now: number;
  /** Turns claimed so far (turn ids are `${channelId}:t${turnSeq}`). */
  turnSeq: number;
  /** Threads opened so far (thread ids are `${channelId}:th${threadSeq}`). */
  threadSeq: number;
  /** Avatar id → presence, in order of arrival. */
  readonly presences: Map<string, PresenceState>;
  /** Thread id → active thread, in order of opening. */
  readonly threads: Map<string, ThreadState>;
  /** Threads that ended, kept briefly so late deliveries are recognised (bounded). */
  readonly endedThreads: Map<string, ThreadOutcome>;
  /** Turn id → claim, for turns granted and not yet delivered or released. */
  readonly inFlight: Map<string, TurnClaim>;
  /** Thread id → turns claimed in it and not yet delivered (they count against its limit). */
  readonly threadReservations: Map<string, number>;
  readonly followUps: PendingFollowUp[];
  /** Avatar id → the answer it owes. */
  readonly deferred: Map<string, DeferredAnswer>;
  /** Avatar id → the greeting it owes, summoned while mid-turn. */
  readonly pendingGreetings: Map<string, ClaimSpec>;
  /**
   * Avatar id → when it said goodbye. Until a person addresses or summons it again (or it speaks
   * again), another avatar naming it does not draw it back into a conversation.
   */
  readonly departed: Map<string, number>;
  /**
   * Avatar pair (`a\0b`, sorted) → when its next thread may open, and how often it backed off:
   * rapid threads between the same two avatars wait longer each time (the specified mitigation).
   */
  readonly threadBackoff: Map<string, ThreadBackoff>;
  /** Avatar id → its latest arrival by summon and who reacted to it, until its follow-ups are done. */
  readonly arrivals: Map<string, Arrival>;
  /**
   * Times of the avatar messages delivered in the channel within the last hour, oldest first (kept
   * only while `TROUPE_CHANNEL_MAX_AVATAR_MESSAGES_PER_HOUR` is set).
   */
  avatarMessages: number[] | undefined;
  /** `avatarId\0personId` → until when that person was told the avatar reached a cap. */
  capNotices: Map<string, number> | undefined;
  budget: Budget;
}

/** An empty floor state (nobody present) at time `now`. */
export function createFloorState(channelId: string, epoch: string, now: number): FloorState {
  return {
    channelId,
    epoch,
    now,
    turnSeq: 0,
    threadSeq: 0,
    presences: new Map(),
    threads: new Map(),
    endedThreads: new Map(),
    inFlight: new Map(),
    threadReservations: new Map(),
    followUps: [],
    deferred: new Map(),
    pendingGreetings: new Map(),
    departed: new Map(),
    threadBackoff: new Map(),
    arrivals: new Map(),
    // Made when first needed: most floors never have a cap reached (and thousands are made).
    avatarMessages: undefined,
    capNotices: undefined,
    budget: { anchorMessageId: undefined, main: 0, cascade: 0 },
  };
}
