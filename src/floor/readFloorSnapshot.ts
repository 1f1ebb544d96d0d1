import type { z } from 'zod';
import { zodIssues } from '../config/zodIssues.js';
import {
  FLOOR_SNAPSHOT_FORMAT,
  FLOOR_SNAPSHOT_VERSION,
  type FloorSnapshot,
  FloorSnapshotError,
  floorSnapshotSchema,
} from './floorSnapshotSchema.js';
import { FLOOR_SNAPSHOT_V1, floorSnapshotV1Schema, migrateFloorSnapshotV1 } from './floorSnapshotV1.js';
import { parseFloorSnapshotFast } from './snapshotFastPath.js';
import { parseFloorSnapshotV1Fast } from './snapshotFastPathV1.js';

/**
 * A stored floor of channel `channelId` as a version-2 snapshot: a version-2 document as it is, a
 * version-1 one migrated. Most stored floors fit their schema plainly and take a fast reader; any
 * other goes through the schema, which also says what is wrong.
 * @throws FloorSnapshotError for a foreign, newer or damaged document.
 */
export function readFloorSnapshot(input: unknown, channelId: string): FloorSnapshot {
  const fast = parseFloorSnapshotFast(input);
  if (fast) return fast;
  const { format, version } = (input ?? {}) as { format?: unknown; version?: unknown };
  if (format !== FLOOR_SNAPSHOT_FORMAT) throw new FloorSnapshotError(channelId, 'not a Troupe channel floor');
  if (version === FLOOR_SNAPSHOT_V1)
    return migrateFloorSnapshotV1(
      parseFloorSnapshotV1Fast(input) ?? parsed(floorSnapshotV1Schema, input, channelId),
    );
  if (version !== FLOOR_SNAPSHOT_VERSION)
    throw new FloorSnapshotError(
      channelId,
      `snapshot version ${String(version)}, this Troupe reads ${FLOOR_SNAPSHOT_V1} to ${FLOOR_SNAPSHOT_VERSION}`,
    );
  return parsed(floorSnapshotSchema, input, channelId);
}

function parsed<T>(schema: z.ZodType<T>, input: unknown, channelId: string): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new FloorSnapshotError(channelId, zodIssues(result.error));
}
