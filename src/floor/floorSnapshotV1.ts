import { z } from 'zod';
import type { AvatarPresenceContext } from '../machines/avatarPresence.machine.js';
import type { ConversationThreadContext } from '../machines/conversationThread.machine.js';
import {
  FLOOR_SNAPSHOT_VERSION,
  type FloorSnapshot,
  floorSnapshotSchema,
  SNAPSHOT_PARTS,
} from './floorSnapshotSchema.js';
import type { TurnClaim } from './floorTypes.js';
import { storedPresence, storedThread } from './storedMachines.js';

/** The version of documents written before presences and threads were stored compactly. */
export const FLOOR_SNAPSHOT_V1 = 1;

const { stateValue, rung, turnKind, budgetLane, threadMode, turnContext, arrival, backoff } = SNAPSHOT_PARTS;

/** A version-1 thread: `extensionMs` and `sentiment` are absent in threads stored before they existed. */
export type ThreadContextV1 = Omit<ConversationThreadContext, 'extensionMs' | 'sentiment'> & {
  extensionMs?: ConversationThreadContext['extensionMs'] | undefined;
  sentiment?: ConversationThreadContext['sentiment'] | undefined;
};

const presenceContextV1: z.ZodType<AvatarPresenceContext> = z.object({
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

const threadContextV1: z.ZodType<ThreadContextV1> = z.object({
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

const turnClaimV1: z.ZodType<TurnClaim> = z.object({
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

/** A machine's state as version 1 stored it: its value and context. */
const machineStateV1 = <TContext>(context: z.ZodType<TContext>) => z.object({ value: stateValue, context });

/**
 * A version-1 document: every presence with its channel id, avatar id and timing settings, every
 * thread with its id and channel id, every claim with its channel id; goodbyes, arrivals and
 * thread backoff absent in documents stored before they were kept. Read only to migrate it.
 */
export const floorSnapshotV1Schema = floorSnapshotSchema.extend({
  version: z.literal(FLOOR_SNAPSHOT_V1),
  presences: z.array(z.tuple([z.string(), machineStateV1(presenceContextV1)])),
  threads: z.array(z.tuple([z.string(), machineStateV1(threadContextV1)])),
  inFlight: z.array(turnClaimV1),
  departed: z.array(z.tuple([z.string(), z.number()])).optional(),
  arrivals: z.array(z.tuple([z.string(), arrival])).optional(),
  threadBackoff: z.array(z.tuple([z.string(), backoff])).optional(),
});

/** See {@link floorSnapshotV1Schema}. */
export type FloorSnapshotV1 = z.infer<typeof floorSnapshotV1Schema>;

/**
 * The version-2 document a version-1 one amounts to. A presence's channel and avatar ids come from
 * the snapshot and its key, its timing settings from the configuration it is restored with (as
 * they did in version 1); a thread stored without `extensionMs` extends by its TTL and one without
 * `sentiment` has scored no turn, which is what version 1 did with them; missing lists are empty.
 */
export function migrateFloorSnapshotV1(v1: FloorSnapshotV1): FloorSnapshot {
  return {
    format: v1.format,
    version: FLOOR_SNAPSHOT_VERSION,
    channelId: v1.channelId,
    epoch: v1.epoch,
    now: v1.now,
    turnSeq: v1.turnSeq,
    threadSeq: v1.threadSeq,
    presences: v1.presences.map(([id, { value, context }]) => [id, storedPresence(value, context)]),
    threads: v1.threads.map(([id, { value, context }]) => [
      id,
      storedThread(value, {
        ...context,
        extensionMs: context.extensionMs ?? context.ttlMs,
        sentiment: context.sentiment ?? { sum: 0, turns: 0 },
      }),
    ]),
    endedThreads: v1.endedThreads,
    inFlight: v1.inFlight.map(({ channelId: _channel, ...claim }) => claim),
    threadReservations: v1.threadReservations,
    followUps: v1.followUps,
    deferred: v1.deferred,
    pendingGreetings: v1.pendingGreetings,
    departed: v1.departed ?? [],
    arrivals: v1.arrivals ?? [],
    threadBackoff: v1.threadBackoff ?? [],
    budget: v1.budget,
  };
}
