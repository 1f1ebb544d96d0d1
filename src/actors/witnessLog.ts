import { z } from 'zod';
import type { Logger } from '../logging/logger.js';
import type { Clock } from '../ports/clock.js';
import type { HistoryEntry } from '../ports/history.js';
import type { DocumentStore } from '../ports/store.js';

/** Where presence intervals live in the store: one document per channel. */
export const WITNESS = 'witness';

/** How many arrivals an avatar's record keeps per channel (older ones lie outside any prompt's window). */
const INTERVALS_KEPT = 50;
/** How many message ids of the latest millisecond are remembered, to order them against arrivals. */
const SAME_MS_IDS = 64;

/**
 * One stay of an avatar in a channel: from its arrival to its dismissal (open while it is there).
 * Messages stamped with the very millisecond of an arrival or a dismissal are placed by the ids
 * the channel had already seen at that moment.
 */
export interface PresenceInterval {
  from: number;
  /** Absent while the avatar is present. */
  to?: number;
  /** Ids of messages stamped `from` that came before the arrival (not witnessed). */
  before?: string[];
  /** Ids of messages stamped `to` that came before the dismissal (witnessed). */
  through?: string[];
}

/** The stored document of one channel: each avatar's stays, oldest first. */
export interface WitnessDocument {
  channelKey: string;
  avatars: Record<string, PresenceInterval[]>;
}

const intervalSchema = z.object({
  from: z.number(),
  to: z.number().optional(),
  before: z.array(z.string()).optional(),
  through: z.array(z.string()).optional(),
});
const documentSchema = z.object({
  channelKey: z.string(),
  avatars: z.record(z.string(), z.array(intervalSchema)),
});

interface ChannelWitness {
  doc: WitnessDocument;
  version: number;
}

/** The messages a prompt may show an avatar, chosen from a history window (oldest first). */
export function witnessedEntries(
  entries: readonly HistoryEntry[],
  avatarId: string,
  intervals: readonly PresenceInterval[],
  backfill: number,
): HistoryEntry[] {
  const keep = new Set<number>();
  entries.forEach((e, i) => {
    if (e.author.kind === 'avatar' && e.author.id === avatarId) keep.add(i);
  });
  for (const stay of intervals) {
    const before: number[] = [];
    entries.forEach((e, i) => {
      if (!startedBy(e, stay)) before.push(i);
      else if (endedAfter(e, stay)) keep.add(i);
    });
    // At arrival the avatar is told the last few messages, and nothing older.
    if (backfill > 0) for (const i of before.slice(-backfill)) keep.add(i);
  }
  return entries.filter((_, i) => keep.has(i));
}

/** True when the message came at or after the arrival. */
function startedBy(e: HistoryEntry, stay: PresenceInterval): boolean {
  return e.at > stay.from || (e.at === stay.from && !(stay.before ?? []).includes(e.messageId));
}

/** True when the message came before the dismissal (or the avatar is still there). */
function endedAfter(e: HistoryEntry, stay: PresenceInterval): boolean {
  if (stay.to === undefined || e.at < stay.to) return true;
  return e.at === stay.to && (stay.through ?? []).includes(e.messageId);
}

/**
 * Keeps, per channel, when each avatar was present, so its prompts hold only what it witnessed.
 * Every change is written to the store at once (arrivals and dismissals are rare), so the record
 * outlives a restart; operations on one channel run in order, so a prompt built right after an
 * arrival sees it.
 */
export class WitnessLog {
  private readonly channels = new Map<string, ChannelWitness>();
  private readonly queues = new Map<string, Promise<unknown>>();
  /** Per channel: the latest message time and the ids stamped with it (memory only). */
  private readonly latest = new Map<string, { at: number; ids: string[] }>();
  /** Per channel: who the floor said was present when the channel started, applied on next use. */
  private readonly pending = new Map<string, { presentIds: readonly string[]; at: number }>();

  constructor(
    private readonly options: { documents: DocumentStore; clock: Clock; logger: Logger; backfill: number },
  ) {}

  /** Notes a message written to the channel's history (orders same-millisecond arrivals). */
  noteMessage(channelKey: string, messageId: string, at: number): void {
    const last = this.latest.get(channelKey);
    if (!last || at > last.at) this.latest.set(channelKey, { at, ids: [messageId] });
    else if (at === last.at && last.ids.length < SAME_MS_IDS) last.ids.push(messageId);
  }

  /** The avatar arrived (no change when it is already there). */
  arrive(channelKey: string, avatarId: string, at: number): Promise<void> {
    const before = this.idsAt(channelKey, at);
    return this.change(channelKey, (doc) => openStay(doc, avatarId, at, before));
  }

  /** The avatar was dismissed (no change when it was not there). */
  leave(channelKey: string, avatarId: string, at: number): Promise<void> {
    const through = this.idsAt(channelKey, at);
    return this.change(channelKey, (doc) => {
      const stay = doc.avatars[avatarId]?.at(-1);
      if (!stay || stay.to !== undefined) return false;
      stay.to = at;
      if (through.length > 0) stay.through = through;
      return true;
    });
  }

  /** Who the floor says is present as the channel starts (see {@link reconcileStays}). */
  reconcile(channelKey: string, presentIds: readonly string[], at: number): void {
    // Applied lazily: a channel that never builds a prompt nor sees an arrival never reads its record.
    this.pending.set(channelKey, { presentIds, at });
  }

  /** What of `entries` (a history window, oldest first) the avatar witnessed, said or was told at arrival. */
  async witnessed(
    channelKey: string,
    avatarId: string,
    entries: readonly HistoryEntry[],
  ): Promise<HistoryEntry[]> {
    const channel = await this.queued(channelKey, () => this.load(channelKey));
    return witnessedEntries(entries, avatarId, channel.doc.avatars[avatarId] ?? [], this.options.backfill);
  }

  private idsAt(channelKey: string, at: number): string[] {
    const last = this.latest.get(channelKey);
    return last && last.at === at ? [...last.ids] : [];
  }

  /** Applies a change to the channel's record and writes it when it changed anything. */
  private change(channelKey: string, apply: (doc: WitnessDocument) => boolean): Promise<void> {
    return this.queued(channelKey, async () => {
      const channel = await this.load(channelKey);
      if (apply(channel.doc)) await this.write(channelKey, channel);
    });
  }

  private async write(channelKey: string, channel: ChannelWitness): Promise<void> {
    try {
      channel.version = await this.options.documents.put(WITNESS, channelKey, channel.doc, {
        expectedVersion: channel.version,
        at: this.options.clock.now(),
      });
    } catch (error) {
      // Another writer moved on (or the store is away): read the record again on next use.
      this.channels.delete(channelKey);
      throw error;
    }
  }

  /** Runs `work` after everything queued before on the channel. */
  private queued<T>(channelKey: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(channelKey) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => undefined);
    this.queues.set(channelKey, tail);
    void tail.then(() => {
      if (this.queues.get(channelKey) === tail) this.queues.delete(channelKey);
    });
    return next;
  }

  /** The channel's record, with the presence found at the channel's start applied (and written). */
  private async load(channelKey: string): Promise<ChannelWitness> {
    const channel = await this.read(channelKey);
    const start = this.pending.get(channelKey);
    if (start) {
      this.pending.delete(channelKey);
      if (reconcileStays(channel.doc, start.presentIds, start.at)) await this.write(channelKey, channel);
    }
    return channel;
  }

  private async read(channelKey: string): Promise<ChannelWitness> {
    const cached = this.channels.get(channelKey);
    if (cached) return cached;
    const stored = await this.options.documents
      .get<WitnessDocument>(WITNESS, channelKey)
      .catch((error: unknown) => {
        this.options.logger.warn({ err: error, channel: channelKey }, 'presence record not read');
        return undefined;
      });
    const parsed = documentSchema.safeParse(stored?.value);
    if (stored && !parsed.success)
      this.options.logger.warn({ channel: channelKey }, 'presence record invalid; starting a new one');
    const channel: ChannelWitness = {
      doc: parsed.success ? (parsed.data as WitnessDocument) : { channelKey, avatars: {} },
      version: stored?.version ?? 0,
    };
    this.channels.set(channelKey, channel);
    return channel;
  }
}

/** Opens a stay for the avatar unless one is open; true when it opened one. */
function openStay(doc: WitnessDocument, avatarId: string, at: number, before: string[]): boolean {
  const stays = doc.avatars[avatarId] ?? [];
  const last = stays.at(-1);
  if (last && last.to === undefined) return false;
  stays.push(before.length > 0 ? { from: at, before } : { from: at });
  if (stays.length > INTERVALS_KEPT) stays.splice(0, stays.length - INTERVALS_KEPT);
  doc.avatars[avatarId] = stays;
  return true;
}

/**
 * Brings the record in line with who the floor says is present when a channel starts: an avatar
 * with no record at all (a resident) has been there from the start; one whose stay the record had
 * closed arrives now; a stay left open for an absent avatar ends now. True when anything changed.
 */
function reconcileStays(doc: WitnessDocument, presentIds: readonly string[], at: number): boolean {
  let changed = false;
  const present = new Set(presentIds);
  for (const id of present) {
    const stays = doc.avatars[id];
    if (stays === undefined || stays.length === 0) {
      doc.avatars[id] = [{ from: 0 }];
      changed = true;
    } else if (openStay(doc, id, at, [])) changed = true;
  }
  for (const [id, stays] of Object.entries(doc.avatars)) {
    const stay = stays.at(-1);
    if (!present.has(id) && stay && stay.to === undefined) {
      stay.to = at;
      changed = true;
    }
  }
  return changed;
}
