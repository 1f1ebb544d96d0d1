import { z } from 'zod';
import { runtimeErrorCodes } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';

/** Identifies a persisted channel floor; anything else is a foreign document. */
export const FLOOR_SNAPSHOT_FORMAT = 'troupe.channel-floor';
/** Bumped when the shape changes; older versions are migrated, newer ones refused. */
export const FLOOR_SNAPSHOT_VERSION = 1;

const stateValue: z.ZodType<string | Record<string, unknown>> = z.union([
  z.string(),
  z.record(z.string(), z.unknown()),
]);
const machineState = z.object({ value: stateValue, context: z.record(z.string(), z.unknown()) });
const claimSpec = z.record(z.string(), z.unknown());

/**
 * A channel floor as plain JSON (DESIGN invariant 4: deadlines are absolute times inside, so a
 * restored floor ends a thread whose TTL passed while the process was down at once, and one with
 * 40 s left 40 s later). Validated on restore; machine contexts are checked again by the
 * machines themselves when restored.
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
  presences: z.array(z.tuple([z.string(), machineState])),
  threads: z.array(z.tuple([z.string(), machineState])),
  endedThreads: z.array(z.tuple([z.string(), z.enum(['expired', 'exhausted', 'concluded'])])),
  inFlight: z.array(z.record(z.string(), z.unknown())),
  threadReservations: z.array(z.tuple([z.string(), z.number().int()])),
  followUps: z.array(
    z.object({
      avatarId: z.string(),
      dueAt: z.number(),
      anchorMessageId: z.string(),
      summonerName: z.string(),
    }),
  ),
  deferred: z.array(z.tuple([z.string(), z.object({ spec: claimSpec, messageId: z.string() })])),
  pendingGreetings: z.array(z.tuple([z.string(), claimSpec])),
  budget: z.object({ anchorMessageId: z.string().optional(), main: z.number(), cascade: z.number() }),
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
