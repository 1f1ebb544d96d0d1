import { clipText } from '../delivery/clipText.js';
import type { Logger } from '../logging/logger.js';
import type { Clock, TimerHandle } from '../ports/clock.js';
import type { DocumentOperation, DocumentStore } from '../ports/store.js';

/**
 * Where relationships live in the store: one document per pair, keyed `avatarId/partnerId` (what
 * the first knows of the second; avatar ids hold no `/`). Before, one document per avatar (keyed
 * by its id) held every partner; one found is read, written again per pair, and deleted.
 */
export const RELATIONSHIPS = 'relationships';

/** The key of what `avatarId` knows of `partnerId`. */
export function relationshipKey(avatarId: string, partnerId: string): string {
  return `${avatarId}/${partnerId}`;
}

/** The clipped line both avatars keep of one exchange. */
function lineOf(input: { speakerId: string; channelKey: string; text: string; at: number }) {
  return {
    at: input.at,
    speakerId: input.speakerId,
    channelKey: input.channelKey,
    text: clipText(input.text.replace(/\s+/g, ' ').trim(), EXCERPT_CHARS),
  };
}

/**
 * How long changes wait to be written (default): every 10 s rather than every second, for notes a
 * crash may set back by at most that much. Only the pairs that talked since are written (an
 * avatar's document with every partner, written whole, was about 20 KB for a 24-avatar cast, and
 * three in four of its partners had not changed since the flush before).
 */
const FLUSH_INTERVAL_MS = 10_000;

/** How many recent lines a relationship keeps, and how long each may be. */
const RECENT_LINES = 5;
const EXCERPT_CHARS = 140;
/**
 * How many channels a relationship counts exchanges in: the latest. Counted in every channel,
 * the document grew with each channel two avatars shared (34 KB an avatar after a 200,000-message
 * run over 1,000 channels), and every flush wrote all of it.
 */
const RECENT_CHANNELS = 8;

/** What one avatar knows about talking with another (relationship tracking). */
export interface Relationship {
  /** The other avatar. */
  partnerId: string;
  /** Turns either of them spoke answering the other. */
  exchanges: number;
  firstAt: number;
  lastAt: number;
  /**
   * Exchanges per channel key, in the 8 channels where they last talked (least recent first;
   * older channels are dropped, so a relationship stays small however many channels they share).
   */
  channels: Record<string, number>;
  /** The latest lines between them, oldest first, clipped. */
  recent: { at: number; speakerId: string; channelKey: string; text: string }[];
}

/** What the tracker keeps of one avatar: every partner it has talked with. */
export interface RelationshipDocument {
  avatarId: string;
  partners: Record<string, Relationship>;
}

/**
 * Records avatar-to-avatar conversations — who, how often, when last, short recent excerpts —
 * and gives them back for prompts. Kept in memory for avatars in use, written to the store in
 * batches (one write per changed pair per flush interval), or, over a store that does not outlive
 * the process (`writeBehind: false`), only when flushed (the runtime does at stop).
 */
export class RelationshipTracker {
  private readonly cache = new Map<string, RelationshipDocument>();
  /** Stored version per pair key. */
  private readonly versions = new Map<string, number>();
  /** Pair keys changed since the last flush. */
  private readonly dirty = new Set<string>();
  /** Avatars whose one-document-per-avatar form was read: deleted (at this version) by the next flush. */
  private readonly legacy = new Map<string, number>();
  private readonly loading = new Map<string, Promise<RelationshipDocument>>();
  private timer: TimerHandle | undefined;

  constructor(
    private readonly options: {
      documents: DocumentStore;
      clock: Clock;
      logger: Logger;
      /** How long changes wait to be written behind (default 10 s). */
      flushIntervalMs?: number;
      /** Write changes behind, on the flush interval (default true). */
      writeBehind?: boolean;
    },
  ) {}

  /**
   * Records that `speakerId` answered `addresseeId` (both avatars) in a channel. Undefined when
   * recorded at once (both avatars in use); otherwise the load and record in flight.
   */
  record(input: {
    speakerId: string;
    addresseeId: string;
    channelKey: string;
    text: string;
    at: number;
  }): Promise<void> | undefined {
    if (input.speakerId === input.addresseeId) return undefined;
    const speaker = this.cache.get(input.speakerId);
    const addressee = this.cache.get(input.addresseeId);
    // Both avatars in use already (nearly always): recorded at once, with no wait.
    if (speaker && addressee) {
      try {
        const line = lineOf(input);
        this.note(input.speakerId, speaker, input.addresseeId, input, line);
        this.note(input.addresseeId, addressee, input.speakerId, input, line);
        this.armFlush();
        return undefined;
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.recordLoading(input);
  }

  private async recordLoading(input: {
    speakerId: string;
    addresseeId: string;
    channelKey: string;
    text: string;
    at: number;
  }): Promise<void> {
    const line = lineOf(input);
    for (const [self, other] of [
      [input.speakerId, input.addresseeId],
      [input.addresseeId, input.speakerId],
    ] as const) {
      this.note(self, await this.load(self), other, input, line);
    }
    this.armFlush();
  }

  /** Adds one exchange with `other` to `doc`, the document of avatar `self`. */
  private note(
    self: string,
    doc: RelationshipDocument,
    other: string,
    input: { channelKey: string; at: number },
    line: Relationship['recent'][number],
  ): void {
    const rel: Relationship = doc.partners[other] ?? {
      partnerId: other,
      exchanges: 0,
      firstAt: input.at,
      lastAt: input.at,
      channels: {},
      recent: [],
    };
    doc.partners[other] = rel;
    // A stored relationship of another shape (written outside Troupe, or damaged) starts these over.
    if (!isPlainObject(rel.channels)) rel.channels = {};
    if (!Array.isArray(rel.recent)) rel.recent = [];
    rel.exchanges += 1;
    rel.lastAt = Math.max(rel.lastAt, input.at);
    countChannel(rel.channels, input.channelKey);
    rel.recent.push(line);
    if (rel.recent.length > RECENT_LINES) rel.recent.splice(0, rel.recent.length - RECENT_LINES);
    this.dirty.add(relationshipKey(self, other));
  }

  /** What `avatarId` knows about each of `partnerIds` it has talked with, most recent first. */
  async about(avatarId: string, partnerIds: readonly string[]): Promise<Relationship[]> {
    const doc = await this.load(avatarId);
    return partnerIds
      .flatMap((id) => {
        const rel = doc.partners[id];
        // Copies deep enough that a caller cannot change what is stored.
        return rel
          ? [{ ...rel, channels: { ...rel.channels }, recent: rel.recent.map((l) => ({ ...l })) }]
          : [];
      })
      .sort((a, b) => b.lastAt - a.lastAt);
  }

  /** Writes what changed: the pairs that talked, and deletes of the one-document form read. */
  async flush(): Promise<void> {
    const operations = this.changes();
    if (operations.length === 0) return;
    try {
      const results = await this.options.documents.batch(operations, this.options.clock.now());
      operations.forEach((o, i) => {
        if (o.op === 'put') this.versions.set(o.key, Number(results[i] ?? 0));
      });
    } catch (error) {
      // Another writer moved on (or the store is away): reload those avatars on next use.
      const avatars = new Set(
        operations.map((o) => (o.op === 'put' ? o.key.slice(0, o.key.indexOf('/')) : o.key)),
      );
      this.drop(avatars);
      this.options.logger.warn({ err: error }, 'relationships not written');
    }
  }

  /** The writes a flush makes (and forgets as pending). */
  private changes(): DocumentOperation[] {
    const operations: DocumentOperation[] = [];
    for (const key of this.dirty) {
      const slash = key.indexOf('/');
      const rel = this.cache.get(key.slice(0, slash))?.partners[key.slice(slash + 1)];
      if (rel)
        operations.push({
          op: 'put',
          collection: RELATIONSHIPS,
          key,
          value: rel,
          expectedVersion: this.versions.get(key) ?? 0,
        });
    }
    this.dirty.clear();
    for (const [avatarId, version] of this.legacy)
      operations.push({ op: 'delete', collection: RELATIONSHIPS, key: avatarId, expectedVersion: version });
    this.legacy.clear();
    return operations;
  }

  /** Forgets what is kept of these avatars (read again on next use). */
  private drop(avatarIds: ReadonlySet<string>): void {
    for (const avatarId of avatarIds) this.cache.delete(avatarId);
    for (const key of this.versions.keys())
      if (avatarIds.has(key.slice(0, key.indexOf('/')))) this.versions.delete(key);
  }

  /** Cancels the pending flush (call {@link flush} first to keep changes). */
  dispose(): void {
    if (this.timer) this.options.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  private armFlush(): void {
    if (this.timer || this.options.writeBehind === false) return;
    const { clock } = this.options;
    this.timer = clock.setTimer(clock.now() + (this.options.flushIntervalMs ?? FLUSH_INTERVAL_MS), () => {
      this.timer = undefined;
      void this.flush();
    });
  }

  private load(avatarId: string): Promise<RelationshipDocument> {
    const cached = this.cache.get(avatarId);
    if (cached) return Promise.resolve(cached);
    let pending = this.loading.get(avatarId);
    if (!pending) {
      pending = this.read(avatarId)
        .catch(() => ({ avatarId, partners: {} }) as RelationshipDocument)
        .then((doc) => {
          this.loading.delete(avatarId);
          // A record() that raced the load wins over a second load.
          const existing = this.cache.get(avatarId);
          if (existing) return existing;
          this.cache.set(avatarId, doc);
          return doc;
        });
      this.loading.set(avatarId, pending);
    }
    return pending;
  }

  /**
   * An avatar's stored pairs, and its partners from the one-document form if one is stored: those
   * are written again as pairs (unless a pair of theirs is stored already) and the document deleted.
   */
  private async read(avatarId: string): Promise<RelationshipDocument> {
    const { documents } = this.options;
    const prefix = relationshipKey(avatarId, '');
    const [pairs, whole] = await Promise.all([
      documents.list<Relationship>(RELATIONSHIPS, { keyPrefix: prefix }),
      documents.get<RelationshipDocument>(RELATIONSHIPS, avatarId),
    ]);
    const partners: Record<string, Relationship> = {};
    const oldPartners = whole?.value?.partners;
    if (whole && typeof oldPartners === 'object' && oldPartners !== null) {
      for (const [partnerId, rel] of Object.entries(oldPartners)) {
        if (!isPlainObject(rel)) continue;
        partners[partnerId] = rel as unknown as Relationship;
        this.dirty.add(relationshipKey(avatarId, partnerId));
      }
    }
    if (whole) {
      this.legacy.set(avatarId, whole.version);
      this.armFlush();
    }
    for (const stored of pairs) {
      // Every stored pair's version is kept, so a bad one is written over, not conflicted with.
      this.versions.set(stored.key, stored.version);
      const partnerId = stored.key.slice(prefix.length);
      this.dirty.delete(stored.key);
      if (isPlainObject(stored.value)) partners[partnerId] = stored.value as unknown as Relationship;
      else delete partners[partnerId];
    }
    return { avatarId, partners };
  }
}

function isPlainObject(value: unknown): value is Record<string, number> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Counts an exchange in `channelKey`, which becomes the latest; the least recent past {@link RECENT_CHANNELS} go. */
function countChannel(channels: Record<string, number>, channelKey: string): void {
  const count = (channels[channelKey] ?? 0) + 1;
  // Deleted and set again: the key moves to the end of the object's order (channel keys are never
  // array indices, which objects order first).
  delete channels[channelKey];
  channels[channelKey] = count;
  let extra = Object.keys(channels).length - RECENT_CHANNELS;
  for (const key in channels) {
    if (extra-- <= 0) break;
    delete channels[key];
  }
}

/**
 * A short note for a prompt about the avatar's history with the others in the conversation, e.g.
 * "You and Rex have talked 7 times, last 3 minutes ago. Lately — Rex: “…”".
 */
export function relationshipNote(
  relationships: readonly Relationship[],
  nameOf: (id: string) => string,
  now: number,
): string | undefined {
  if (relationships.length === 0) return undefined;
  const lines = relationships.slice(0, 3).map((r) => {
    const name = nameOf(r.partnerId);
    const last = r.recent.at(-1);
    const said = last ? ` Lately — ${last.speakerId === r.partnerId ? name : 'you'}: “${last.text}”` : '';
    return `You and ${name} have talked ${r.exchanges} time${r.exchanges === 1 ? '' : 's'}, last ${ago(now - r.lastAt)}.${said}`;
  });
  return `Your history with them:\n${lines.map((l) => `- ${l}`).join('\n')}`;
}

function ago(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? '' : 's'} ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} hour${hours === 1 ? '' : 's'} ago`;
  return `${Math.round(hours / 24)} days ago`;
}
