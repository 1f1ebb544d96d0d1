import type { StateValue } from 'xstate';
import { z } from 'zod';
import { runtimeErrorCodes } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';
import type { AvatarPresenceContext } from './avatarPresence.machine.js';
import type { ConversationThreadContext } from './conversationThread.machine.js';
import type { Budget, ClaimSpec, DeferredAnswer, PendingFollowUp } from './floor/floorState.js';
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
export const FLOOR_SNAPSHOT_VERSION = 1;

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

const presenceContext: z.ZodType<AvatarPresenceContext> = z.object({
  channelId: z.string(),
  avatarId: z.string(),
  // Stored as it was; a restored floor's presences take the current configuration's instead.
  settings: z.object({
    perAvatarCooldownMs: z.number(),
    recentSummonCooldownMs: z.number(),
    stickyAffinityTtlMs: z.number(),
    attentionHalfLifeMs: z.number(),
    summonConversationDurationMs: z.number(),
  }),
  now: z.number(),
  summonTurns: z.number(),
  grantedAt: z.number().nullable(),
  conversingUntil: z.number(),
  lastSpokeAt: z.number().nullable(),
  cooldownUntil: z.number(),
  attention: z.object({ value: z.number(), at: z.number() }),
  lastMentionAt: z.number().nullable(),
  lastMentionBy: z.string().nullable(),
  affinity: z.record(z.string(), z.number()),
  claim: z.object({ turnId: z.string(), rung, claimedAt: z.number() }).nullable(),
  delivered: z.number(),
});

const threadContext: z.ZodType<ConversationThreadContext> = z.object({
  id: z.string(),
  channelId: z.string(),
  mode: threadMode,
  participants: z.array(z.string()),
  departed: z.array(z.string()),
  maxTurns: z.number(),
  ttlMs: z.number(),
  quietMs: z.number(),
  extendOnActivity: z.boolean(),
  extensionMs: z.number().optional(),
  turnCount: z.number(),
  startedAt: z.number(),
  now: z.number(),
  lastActivityAt: z.number(),
  expiresAt: z.number(),
  quietDeadline: z.number().nullable(),
  lastSpeakerId: z.string().nullable(),
  detail: z.string().nullable(),
  sentiment: z.object({ sum: z.number(), turns: z.number() }).optional(),
});

/** A machine's state as stored: its value and context (its status follows from the value). */
const machineState = <TContext>(context: z.ZodType<TContext>) => z.object({ value: stateValue, context });

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

const turnClaim: z.ZodType<TurnClaim> = z.object({
  turnId: z.string(),
  channelId: z.string(),
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
const budget: z.ZodType<Omit<Budget, 'anchorMessageId'> & { anchorMessageId?: string }> = z.object({
  anchorMessageId: z.string().optional(),
  main: z.number(),
  cascade: z.number(),
});

/**
 * A channel floor as plain JSON: its `FloorState`, with every map as a list of `[key, value]`
 * entries and every machine state as its value and context (docs/architecture.md, invariant 4: deadlines are
 * absolute times inside, so a restored floor ends a thread whose TTL passed while the process was
 * down at once, and one with 40 s left 40 s later). Validated on restore; machine state values are
 * checked again by the machines themselves when restored.
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
  presences: z.array(z.tuple([z.string(), machineState(presenceContext)])),
  threads: z.array(z.tuple([z.string(), machineState(threadContext)])),
  endedThreads: z.array(z.tuple([z.string(), threadOutcome])),
  inFlight: z.array(turnClaim),
  threadReservations: z.array(z.tuple([z.string(), z.number().int()])),
  followUps: z.array(pendingFollowUp),
  deferred: z.array(z.tuple([z.string(), deferredAnswer])),
  pendingGreetings: z.array(z.tuple([z.string(), claimSpec])),
  /** Absent in documents stored before goodbyes were remembered. */
  departed: z.array(z.tuple([z.string(), z.number()])).optional(),
  /** Absent in documents stored before second follow-ups existed. */
  arrivals: z
    .array(
      z.tuple([
        z.string(),
        z.object({ at: z.number(), reactedBy: z.object({ id: z.string(), name: z.string() }).optional() }),
      ]),
    )
    .optional(),
  /** Absent in documents stored before thread backoff existed. */
  threadBackoff: z
    .array(z.tuple([z.string(), z.object({ endedAt: z.number(), level: z.number(), until: z.number() })]))
    .optional(),
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
