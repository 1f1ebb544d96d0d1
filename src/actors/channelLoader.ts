import { randomUUID } from 'node:crypto';
import type { Subject } from 'rxjs';
import type { CoordinationConfig } from '../config/coordinationConfig.js';
import type { SpendGate } from '../floor/caps.js';
import { ChannelFloor } from '../floor/channelFloor.js';
import { FloorSnapshotError } from '../floor/floorSnapshotSchema.js';
import type { AvatarProfile } from '../floor/floorTypes.js';
import type { Logger } from '../logging/logger.js';
import type { Clock } from '../ports/clock.js';
import type { HistoryEntry, HistoryReader } from '../ports/history.js';
import type { ChannelRef } from '../ports/outgoingResponse.js';
import type { DocumentStore } from '../ports/store.js';
import { describe, TroupeError } from '../ports/troupeError.js';
import type { AvatarDefinition } from './avatarDefinition.js';
import type { ChannelStart } from './channelActor.js';
import type { ChannelHandover } from './channelHandover.js';
import { channelKey } from './channelKey.js';
import type { ChannelLeases } from './channelLeases.js';
import { CHANNELS, type ChannelPersistence } from './channelPersistence.js';
import { restoreChannel } from './channelRestore.js';
import type { UnfoldedHistory } from './unfoldedHistory.js';

/** What {@link ChannelLoader} reads channels with. */
export interface ChannelLoaderDeps {
  /** The avatars given to the runtime (their residences). */
  avatars: readonly AvatarDefinition[];
  /** The floors' roster as it is now (avatars are created and forgotten while the runtime runs). */
  roster: () => readonly AvatarProfile[];
  config: CoordinationConfig;
  clock: Clock;
  logger: Logger;
  documents: DocumentStore;
  persistence: ChannelPersistence;
  /** History lines riding the ledgers: a restored channel's are read back from its ledger. */
  history?: { unfolded: UnfoldedHistory; store: HistoryReader } | undefined;
  /** Present when processes share a durable store: a channel is loaded only once its lease is taken. */
  leases: ChannelLeases | undefined;
  /** With leases: where the events other processes stored for a channel are taken from once it is leased. */
  handover?: ChannelHandover | undefined;
  errors$: Subject<TroupeError>;
  /** The daily caps kept by the usage ledger, when any is set. */
  spendGate?: SpendGate | undefined;
  /** Settles when what floors decide with is ready (the day's stored usage read); never rejects. */
  ready?: Promise<void> | undefined;
}

/**
 * Finds what a channel actor starts from: the channel's stored state, or a fresh floor with the
 * channel's resident avatars present. A stored state that cannot be used is reported and the
 * channel starts fresh; a channel another process holds the lease of is refused (its events are
 * then handed over), and a channel leased here starts with the events handed over to it.
 */
export class ChannelLoader {
  /** Residents by channel, so a channel with residents starts with them present. */
  private readonly residents: ReadonlyMap<string, { channel: ChannelRef; ids: string[] }>;

  constructor(private readonly deps: ChannelLoaderDeps) {
    this.residents = residentsByChannel(deps.avatars);
  }

  /** Whether any avatar lives in the channel from the start. */
  hasResidents(key: string): boolean {
    return (this.residents.get(key)?.ids.length ?? 0) > 0;
  }

  /**
   * The channel's starting state: leased first when leases are in use.
   *
   * @throws TroupeError `TROUPE_CHANNEL_OWNED` when another runtime has the channel, or its lease
   *   could not be read or written.
   */
  async start(key: string, channel: ChannelRef): Promise<ChannelStart> {
    await this.deps.ready;
    return this.deps.leases ? this.leased(key, channel) : this.load(key);
  }

  private fresh(key: string): ChannelStart {
    const { config, roster, clock } = this.deps;
    // Lines of a state the channel does not start from are no one's.
    this.deps.history?.unfolded.forget(key);
    return {
      floor: new ChannelFloor({
        channelId: key,
        config,
        roster: roster(),
        spendGate: this.deps.spendGate,
        present: this.residents.get(key)?.ids ?? [],
        at: clock.now(),
        epoch: randomUUID().slice(0, 8),
      }),
      restored: false,
    };
  }

  /** Loads a channel from the store; anything unusable is reported and the channel starts fresh. */
  private async load(key: string): Promise<ChannelStart> {
    const { config, roster, clock, logger, persistence, errors$ } = this.deps;
    try {
      const loaded = await persistence.load(key);
      if (loaded.kind === 'invalid') {
        logger.error({ channel: key, err: loaded.error }, loaded.error.message);
        errors$.next(loaded.error);
        return this.fresh(key);
      }
      if (loaded.kind === 'fresh') return this.fresh(key);
      try {
        const setting = {
          channelId: key,
          config,
          roster: roster(),
          spendGate: this.deps.spendGate,
          now: () => clock.now(),
        };
        const restored = restoreChannel(loaded.document, loaded.events, setting);
        await this.restoreLines(key, restored.lines);
        return { ...restored, restored: true };
      } catch (error) {
        if (!FloorSnapshotError.isInstance(error)) throw error;
        const stored = await this.deps.documents.get(CHANNELS, key);
        if (stored) await persistence.quarantine(key, stored.value, stored.version);
        logger.error({ channel: key, err: error }, error.message);
        errors$.next(error);
        return this.fresh(key);
      }
    } catch (error) {
      // The store is away: the channel works from a fresh state rather than not at all.
      const failure = new TroupeError(
        'TROUPE_STORE_UNAVAILABLE',
        `Channel ${key} could not be loaded from the store; it runs from a fresh state until the store is back.`,
        { retryable: true, cause: error },
      );
      logger.error({ channel: key, err: failure }, failure.message);
      errors$.next(failure);
      return this.fresh(key);
    }
  }

  /**
   * Sets a restored channel's unstored lines: those its ledger holds, less any the history store
   * has already (a fold whose snapshot lost a compare-and-set stored its lines; a store written
   * by a version that wrote every line at once).
   */
  private async restoreLines(key: string, lines: readonly HistoryEntry[]): Promise<void> {
    const history = this.deps.history;
    if (!history) return;
    if (lines.length === 0) {
      history.unfolded.restore(key, []);
      return;
    }
    const stored = await history.store.recent(key, lines.length);
    const known = new Set(stored.map((line) => line.messageId));
    history.unfolded.restore(
      key,
      lines.filter((line) => !known.has(line.messageId)),
    );
  }

  /**
   * Takes the channel's lease, then loads it with the events other processes handed over to it;
   * refuses with `TROUPE_CHANNEL_OWNED` if another runtime has it.
   */
  private async leased(key: string, channel: ChannelRef): Promise<ChannelStart> {
    let holder: Awaited<ReturnType<ChannelLeases['acquire']>>;
    try {
      holder = await (this.deps.leases as ChannelLeases).acquire(key);
    } catch (error) {
      // Without the lease we cannot know that nobody else answers here: refuse rather than risk it.
      throw new TroupeError(
        'TROUPE_CHANNEL_OWNED',
        `Channel ${key} was not taken: its lease could not be read or written (${describe(error)}); its events are refused until the store answers.`,
        { retryable: true, cause: error, details: { channel } },
      );
    }
    if (holder)
      throw new TroupeError(
        'TROUPE_CHANNEL_OWNED',
        `Channel ${key} is handled by another Troupe process (${holder.owner}) sharing this store until that process stops or its lease lapses (${new Date(holder.expiresAt).toISOString()}); events sent here that asked for the channel's ownership were refused, the others are handed over to it.`,
        { retryable: true, details: { channel, owner: holder.owner, expiresAt: holder.expiresAt } },
      );
    const start = await this.load(key);
    const handedOver = await this.deps.handover?.take(key).catch((error: unknown) => {
      // The next poll applies them.
      this.deps.logger.warn(
        { channel: key, err: error },
        'could not read the events handed over to a channel',
      );
      return [];
    });
    return handedOver && handedOver.length > 0 ? { ...start, handedOver } : start;
  }
}

/** The avatars resident in each channel (`residentIn` holds `kind:id`), by channel key. */
function residentsByChannel(
  avatars: readonly AvatarDefinition[],
): Map<string, { channel: ChannelRef; ids: string[] }> {
  const residents = new Map<string, { channel: ChannelRef; ids: string[] }>();
  for (const avatar of avatars) {
    for (const spec of avatar.residentIn) {
      const split = spec.indexOf(':');
      const channel = { kind: spec.slice(0, split), id: spec.slice(split + 1) };
      const key = channelKey(channel);
      const entry = residents.get(key) ?? { channel, ids: [] };
      entry.ids.push(avatar.id);
      residents.set(key, entry);
    }
  }
  return residents;
}
