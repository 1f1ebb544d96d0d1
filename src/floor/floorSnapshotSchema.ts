import type { StateValue } from 'xstate';
import { z } from 'zod';
import type { AvatarPresenceContext } from '../machines/avatarPresence.machine.js';
import type { ConversationThreadContext } from '../machines/conversationThread.machine.js';
import { runtimeErrorCodes } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';
import type { Budget, ClaimSpec, DeferredAnswer, PendingFollowUp } from './floorState.js';
import type {
  BudgetLane,
  Rung,
  ThreadMode,
  ThreadOutcome,
  TurnClaim,
  TurnContext,
  TurnKind,
} from './floorTypes.js';

/** Identifies a persisted channel floor; anything else is a foreign document. */
export const FLOOR_SNAPSHOT_FORMAT = 'troupe.channel-floor';
/** Bumped when the shape changes; older versions are migrated, newer ones refused. */
export const FLOOR_SNAPSHOT_VERSION = 2;

// Each schema is annotated with the type it reads, so the compiler checks that what a snapshot
// restores is exactly what the floor keeps (no casts on restore).

/** The values of each enumeration a snapshot holds (the schema and the fast reader share them). */
export const SNAPSHOT_ENUMS = {
  rung: [
    'reply',
    'thread',
    'summon',
    'affinity',
    'mention',
    'round-robin',
    'initiative',
    'greeting',
    'follow-up',
  ] as const satisfies readonly Rung[],
  turnKind: ['greeting', 'follow-up', 'response'] as const satisfies readonly TurnKind[],
  budgetLane: ['main', 'cascade', 'thread', 'scheduled'] as const satisfies readonly BudgetLane[],
  threadMode: ['mention', 'summon', 'reply'] as const satisfies readonly ThreadMode[],
  threadOutcome: ['expired', 'exhausted', 'concluded'] as const satisfies readonly ThreadOutcome[],
  threadMood: ['warm', 'tense', 'neutral'] as const,
};

const rung: z.ZodType<Rung> = z.enum(SNAPSHOT_ENUMS.rung);
const turnKind: z.ZodType<TurnKind> = z.enum(SNAPSHOT_ENUMS.turnKind);
const budgetLane: z.ZodType<BudgetLane> = z.enum(SNAPSHOT_ENUMS.budgetLane);
const threadMode: z.ZodType<ThreadMode> = z.enum(SNAPSHOT_ENUMS.threadMode);
const threadOutcome: z.ZodType<ThreadOutcome> = z.enum(SNAPSHOT_ENUMS.threadOutcome);

const stateValue: z.ZodType<StateValue> = z.union([
  z.string(),
  z.record(
    z.string(),
    z.lazy(() => stateValue),
  ),
]);

/** The state value a new presence starts in; a stored presence in it leaves `state` out. */
export const INITIAL_PRESENCE_STATE_JSON = '{"present":{"mode":"ambient","turn":"ready"}}';

/**
 * A presence as stored: its state and the context the map key (avatar id), the snapshot (channel
 * id) and the configuration (timing settings) do not already give. A field at the value a new
 * presence starts with (0, null, no affinity, no claim) is left out and restored as that value.
 */
export interface StoredPresence {
  /** Absent while the presence is in its initial state (see {@link INITIAL_PRESENCE_STATE_JSON}). */
  state?: StateValue | undefined;
  now: number;
  attention: AvatarPresenceContext['attention'];
  summonTurns?: number | undefined;
  grantedAt?: number | undefined;
  conversingUntil?: number | undefined;
  lastSpokeAt?: number | undefined;
  cooldownUntil?: number | undefined;
  lastMentionAt?: number | undefined;
  lastMentionBy?: string | undefined;
  affinity?: Record<string, number> | undefined;
  claim?: NonNullable<AvatarPresenceContext['claim']> | undefined;
  delivered?: number | undefined;
}

/** A thread as stored: its state and its context but for the map key (thread id) and channel id. */
export type StoredThread = { state: StateValue } & Omit<ConversationThreadContext, 'id' | 'channelId'>;

/** A turn in flight as stored: the channel id is the snapshot's. */
export type StoredTurnClaim = Omit<TurnClaim, 'channelId'>;

const storedPresence: z.ZodType<StoredPresence> = z.object({
  state: stateValue.optional(),
  now: z.number(),
  attention: z.object({ value: z.number(), at: z.number() }),
  summonTurns: z.number().optional(),
  grantedAt: z.number().optional(),
  conversingUntil: z.number().optional(),
  lastSpokeAt: z.number().optional(),
  cooldownUntil: z.number().optional(),
  lastMentionAt: z.number().optional(),
  lastMentionBy: z.string().optional(),
  affinity: z.record(z.string(), z.number()).optional(),
  claim: z.object({ turnId: z.string(), rung, claimedAt: z.number() }).optional(),
  delivered: z.number().optional(),
});

const storedThread: z.ZodType<StoredThread> = z.object({
  state: stateValue,
  mode: threadMode,
  participants: z.array(z.string()),
  departed: z.array(z.string()),
  maxTurns: z.number(),
  ttlMs: z.number(),
  quietMs: z.number(),
  extendOnActivity: z.boolean(),
  extensionMs: z.number(),
  turnCount: z.number(),
  startedAt: z.number(),
  now: z.number(),
  lastActivityAt: z.number(),
  expiresAt: z.number(),
  quietDeadline: z.number().nullable(),
  lastSpeakerId: z.string().nullable(),
  detail: z.string().nullable(),
  sentiment: z.object({ sum: z.number(), turns: z.number() }),
});

const turnContext: z.ZodType<TurnContext> = z.object({
  triggerText: z.string().optional(),
  addressedByName: z.string().optional(),
  addressedById: z.string().optional(),
  presentNames: z.array(z.string()),
  threadPartnerNames: z.array(z.string()),
  threadTurn: z.number().optional(),
  threadMaxTurns: z.number().optional(),
  closing: z.boolean(),
  maxChars: z.number().optional(),
  alreadyPresent: z.literal(true).optional(),
  threadMood: z.enum(SNAPSHOT_ENUMS.threadMood).optional(),
});

const storedTurnClaim: z.ZodType<StoredTurnClaim> = z.object({
  turnId: z.string(),
  avatarId: z.string(),
  kind: turnKind,
  rung,
  reason: z.string(),
  lane: budgetLane,
  anchorMessageId: z.string(),
  triggerMessageId: z.string().optional(),
  threadId: z.string().optional(),
  claimedAt: z.number(),
  context: turnContext,
});

const claimSpec: z.ZodType<ClaimSpec> = z.object({
  avatarId: z.string(),
  kind: turnKind,
  rung,
  reason: z.string(),
  lane: budgetLane,
  anchorMessageId: z.string(),
  triggerMessageId: z.string().optional(),
  triggerText: z.string().optional(),
  // Absent when undefined: JSON drops it.
  threadId: z.string().optional(),
  addressedBy: z.object({ id: z.string(), name: z.string() }).optional(),
  alreadyPresent: z.literal(true).optional(),
});

const deferredAnswer: z.ZodType<DeferredAnswer> = z.object({ spec: claimSpec, messageId: z.string() });

const pendingFollowUp: z.ZodType<PendingFollowUp> = z.object({
  avatarId: z.string(),
  dueAt: z.number(),
  anchorMessageId: z.string(),
  summonerName: z.string(),
  second: z.literal(true).optional(),
});

// The budget's anchor is left out before the first human message.
const budget: z.ZodType<Omit<Budget, 'anchorMessageId'> & { anchorMessageId?: string | undefined }> =
  z.object({
    anchorMessageId: z.string().optional(),
    main: z.number(),
    cascade: z.number(),
  });

/** An arrival as stored: when, and who reacted to it. */
const arrival = z.object({
  at: z.number(),
  reactedBy: z.object({ id: z.string(), name: z.string() }).optional(),
});
const backoff = z.object({ endedAt: z.number(), level: z.number(), until: z.number() });

/** The pieces the version-1 schema shares with this one. */
export const SNAPSHOT_PARTS = {
  stateValue,
  rung,
  turnKind,
  budgetLane,
  threadMode,
  turnContext,
  arrival,
  backoff,
};

/**
 * A channel floor as plain JSON: its `FloorState`, with every map as a list of `[key, value]`
 * entries and every machine state as its state value beside its context (docs/architecture.md,
 * invariant 4: deadlines are absolute times inside, so a restored floor ends a thread whose TTL
 * passed while the process was down at once, and one with 40 s left 40 s later). Nothing the
 * channel, a map key or the configuration gives is stored (see {@link StoredPresence}). Validated
 * on restore; machine state values are checked again by the machines themselves when restored.
 */
export const floorSnapshotSchema = z.object({
  format: z.literal(FLOOR_SNAPSHOT_FORMAT),
  version: z.literal(FLOOR_SNAPSHOT_VERSION),
  channelId: z.string().min(1),
  /** Unique per floor lifetime: turn ids restart with a fresh floor, so keys include it. */
  epoch: z.string().min(1),
  now: z.number(),
  turnSeq: z.number().int().nonnegative(),
  threadSeq: z.number().int().nonnegative(),
  presences: z.array(z.tuple([z.string(), storedPresence])),
  threads: z.array(z.tuple([z.string(), storedThread])),
  endedThreads: z.array(z.tuple([z.string(), threadOutcome])),
  inFlight: z.array(storedTurnClaim),
  threadReservations: z.array(z.tuple([z.string(), z.number().int()])),
  followUps: z.array(pendingFollowUp),
  deferred: z.array(z.tuple([z.string(), deferredAnswer])),
  pendingGreetings: z.array(z.tuple([z.string(), claimSpec])),
  departed: z.array(z.tuple([z.string(), z.number()])),
  arrivals: z.array(z.tuple([z.string(), arrival])),
  threadBackoff: z.array(z.tuple([z.string(), backoff])),
  /** Times of the avatar messages in the last hour (absent when none are kept). */
  avatarMessages: z.array(z.number()).optional(),
  /** Who was told of which avatar's cap, and until when (absent when nobody was). */
  capNotices: z.array(z.tuple([z.string(), z.number()])).optional(),
  budget,
});

/** See {@link floorSnapshotSchema}. */
export type FloorSnapshot = z.infer<typeof floorSnapshotSchema>;

const FLOOR_SNAPSHOT_ERROR = Symbol.for('troupe.error.floor-snapshot');

/** A persisted floor that cannot be restored: not ours, from a newer version, or damaged. */
export class FloorSnapshotError extends TroupeError {
  declare readonly code: typeof runtimeErrorCodes.snapshotInvalid;

  constructor(channelId: string, reason: string) {
    super(
      runtimeErrorCodes.snapshotInvalid,
      `The stored state of channel ${channelId} cannot be restored (${reason}); the channel starts fresh.`,
      { details: { channelId } },
    );
    this.name = 'FloorSnapshotError';
    Object.defineProperty(this, FLOOR_SNAPSHOT_ERROR, { value: true });
  }

  /** True for a {@link FloorSnapshotError} from any copy of Troupe. */
  static override isInstance(error: unknown): error is FloorSnapshotError {
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as Record<symbol, unknown>)[FLOOR_SNAPSHOT_ERROR] === true
    );
  }
}
