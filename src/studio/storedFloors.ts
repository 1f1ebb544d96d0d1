import { CREATED_AVATARS } from '../actors/avatarCreator.js';
import { CHANNELS } from '../actors/channelPersistence.js';
import { readChannelState } from '../actors/channelRestore.js';
import type { CoordinationConfig } from '../config/coordinationConfig.js';
import type { FloorView } from '../floor/channelFloor.js';
import type { AvatarProfile } from '../floor/floorTypes.js';
import type { Logger } from '../logging/logger.js';
import type { DocumentStore } from '../ports/store.js';

/** How many channels the studio reads from a store (the most a page lists usefully). */
const MAX_CHANNELS = 200;

/** What {@link storedFloorsReader} reads with. */
export interface StoredFloorsOptions {
  documents: DocumentStore;
  config: CoordinationConfig;
  /**
   * Avatars by id, to name them (or a function giving them as they are now: summoning creates
   * some); an avatar stored on a floor but not here is named by its id.
   */
  avatars?: readonly AvatarProfile[] | (() => readonly AvatarProfile[]);
  now: () => number;
  logger: Logger;
}

/**
 * Reads the floors other processes keep in the store, the way a runtime restores them (snapshot,
 * then ledger replay) and changing nothing: no lease is taken, so a running chat or Discord bot
 * keeps its channels. A channel whose state does not restore is logged and left out. Avatars are
 * named as given, else as the store's created avatars say, else by their id.
 */
export function storedFloorsReader(
  options: StoredFloorsOptions,
): () => Promise<{ channelKey: string; view: FloorView }[]> {
  const { documents, config, now, logger } = options;
  const given = options.avatars ?? [];
  return async () => {
    const known = new Map((typeof given === 'function' ? given() : given).map((a) => [a.id, a]));
    // Avatars summoning created, in this process or another, name themselves from the store.
    for (const stored of await documents.list<{ id?: unknown; name?: unknown }>(CREATED_AVATARS, {
      limit: MAX_CHANNELS,
    }))
      if (!known.has(stored.key) && typeof stored.value?.name === 'string')
        known.set(stored.key, { id: stored.key, name: stored.value.name });
    const channels = await documents.list<{ floor?: { presences?: [string, unknown][] } }>(CHANNELS, {
      limit: MAX_CHANNELS,
    });
    const floors: { channelKey: string; view: FloorView }[] = [];
    for (const channel of channels) {
      // Every avatar on the stored floor is in the roster: one left out would be dropped from it.
      const ids = (channel.value?.floor?.presences ?? []).map(([id]) => id);
      const roster = [...new Set([...known.keys(), ...ids])].map((id) => known.get(id) ?? { id, name: id });
      try {
        const state = await readChannelState(documents, { channelId: channel.key, config, roster, now });
        if (state) floors.push({ channelKey: channel.key, view: state.floor.view() });
      } catch (error) {
        logger.warn({ err: error, channel: channel.key }, 'a stored channel does not restore; not shown');
      }
    }
    return floors;
  };
}
