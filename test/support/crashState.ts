/**
 * What a crash-test run left in the store for a channel, read the way the runtime restores it:
 * the snapshot, then the turn ledger written after it replayed (the runtime's own restore code),
 * and the marker of the last write that state reflects.
 */
import { avatarListSchema, toProfile } from '../../src/actors/avatarDefinition.js';
import { readChannelState } from '../../src/actors/channelRestore.js';
import { resolveCoordinationConfig } from '../../src/config/coordinationFromEnv.js';
import type { ChannelFloor } from '../../src/floor/channelFloor.js';
import type { FloorSnapshot } from '../../src/floor/floorSnapshotSchema.js';
import type { DocumentStore } from '../../src/ports/store.js';
import { CRASH_AVATARS, CRASH_CONFIG, type CrashMarker, MARKER_FIELD } from './crashScenario.js';

const config = resolveCoordinationConfig(CRASH_CONFIG);
const roster = avatarListSchema.parse(CRASH_AVATARS).map(toProfile);

/** A channel's stored state as a restarted runtime would have it. */
export interface CrashChannelState {
  floor: ChannelFloor;
  snapshot: FloorSnapshot;
  /** Of the last write the state reflects: the newest ledger entry, else the snapshot. */
  marker: CrashMarker | undefined;
}

const markerOf = (value: unknown): CrashMarker | undefined =>
  typeof value === 'object' && value !== null
    ? (value as { [MARKER_FIELD]?: CrashMarker })[MARKER_FIELD]
    : undefined;

/** Undefined when nothing is stored for the channel. */
export async function readCrashChannel(
  documents: DocumentStore,
  channelKey: string,
): Promise<CrashChannelState | undefined> {
  const state = await readChannelState(documents, { channelId: channelKey, config, roster, now: Date.now });
  if (!state) return undefined;
  const { snapshot, entries } = state.stored;
  const last = entries.filter((e) => e.version === snapshot?.version).at(-1);
  return {
    floor: state.floor,
    snapshot: state.floor.snapshot(),
    marker: last ? markerOf(last.value) : markerOf(snapshot?.value),
  };
}
