import type { CoordinationConfig } from '../config/coordinationConfig.js';
import type { SpendGate } from '../floor/caps.js';
import { ChannelFloor } from '../floor/channelFloor.js';
import type { AvatarProfile, FloorEvent } from '../floor/floorTypes.js';
import type { HistoryEntry } from '../ports/history.js';
import type { DocumentStore } from '../ports/store.js';
import { replayLedger } from './channelLedger.js';
import {
  type ChannelDocument,
  parseStoredChannel,
  readStoredChannel,
  type StoredChannel,
} from './channelPersistence.js';
import { historyLinesOf } from './unfoldedHistory.js';

/** A channel's floor as a runtime restores it, with what the channel actor keeps beside it. */
export interface RestoredChannel {
  floor: ChannelFloor;
  /** `[threadId, avatarId, turns spoken]`. */
  spoken: [string, string, number][];
  /** Inbound message ids already handled, oldest first. */
  seen: string[];
  /** The history lines the replayed ledger events stand for, oldest first (see `historyLinesOf`). */
  lines: HistoryEntry[];
}

/** What a floor is restored with: the runtime's channel id, configuration and roster. */
export interface RestoreSetting {
  channelId: string;
  config: CoordinationConfig;
  roster: readonly AvatarProfile[];
  /** The daily caps of the usage ledger, if any (the replay decides under them too). */
  spendGate?: SpendGate | undefined;
  /** The clock the replay runs on (it arms no timers; the restored floor's driver does). */
  now: () => number;
}

/**
 * The floor a stored snapshot and the ledger events after it amount to: the snapshot restored,
 * then the events applied as they were when the channel was live.
 * @throws FloorSnapshotError (`TROUPE_SNAPSHOT_INVALID`) for a snapshot that does not restore.
 */
export function restoreChannel(
  document: ChannelDocument,
  events: readonly FloorEvent[],
  setting: RestoreSetting,
): RestoredChannel {
  const { channelId, config, roster, now, spendGate } = setting;
  const floor = ChannelFloor.restore(document.floor, { channelId, config, roster, spendGate });
  const { spoken, seen, speakerAt } = replayLedger(floor, events, {
    spoken: document.spoken,
    seen: document.seen ?? [],
    now,
  });
  const names = new Map(roster.map((a) => [a.id, a.name]));
  const lines = historyLinesOf(channelId, events, speakerAt, (id) => names.get(id) ?? id);
  return { floor, spoken, seen, lines };
}

/**
 * Reads a channel's stored state the way a runtime restores it (snapshot, then ledger replay)
 * without changing the store: for tools that inspect a store another process wrote. Undefined
 * when nothing is stored; `TROUPE_SNAPSHOT_INVALID` is thrown for state a runtime would quarantine.
 */
export async function readChannelState(
  documents: DocumentStore,
  setting: RestoreSetting,
): Promise<(RestoredChannel & { stored: StoredChannel }) | undefined> {
  const stored = await readStoredChannel(documents, setting.channelId);
  const loaded = parseStoredChannel(setting.channelId, stored);
  if (loaded.kind === 'fresh') return undefined;
  if (loaded.kind === 'invalid') throw loaded.error;
  return { ...restoreChannel(loaded.document, loaded.events, setting), stored };
}
