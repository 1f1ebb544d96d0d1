import { hostname } from 'node:os';
import type { Logger } from '../logging/logger.js';
import type { Clock, TimerHandle } from '../ports/clock.js';
import type { DocumentStore } from '../ports/store.js';
import { TroupeError } from '../ports/troupeError.js';

/** The collection leases live in, one document per channel key. */
export const LEASES = 'channel-leases';

/**
 * The collection of runtime heartbeats, one document per lease owner: while a runtime's heartbeat
 * is fresh, every lease it holds is, whatever the lease's own expiry says.
 */
export const HEARTBEATS = 'runtime-heartbeats';

/** How long a lease lasts unless its holder's heartbeat is renewed (every third of it). */
export const DEFAULT_LEASE_TTL_MS = 30_000;

/** A runtime's heartbeat as stored. */
interface HeartbeatValue {
  /** Epoch ms until which the runtime's leases stand. */
  expiresAt: number;
}

/** A lease as stored. */
interface LeaseValue {
  /** The runtime holding it (host, process id and a random part: unique per runtime instance). */
  owner: string;
  /** Epoch ms after which another runtime may take the channel. */
  expiresAt: number;
}

/** Who holds a channel another runtime asked for, and until when. */
export interface LeaseHolder {
  owner: string;
  expiresAt: number;
}

/**
 * Channel ownership across processes sharing one durable store (SQLite file, MongoDB database):
 * a runtime works on a channel only while it holds the channel's lease, a document written by
 * compare-and-set with an expiry. Another runtime takes the channel over only once the lease has
 * lapsed (its holder crashed or hung); until then it hands the channel's events over to the
 * holder (see ChannelHandover). So one channel has one writer at a time: no reply is sent twice and no
 * idempotency key is used by two processes for different texts.
 *
 * A holder keeps its leases by renewing one heartbeat document every third of the lease time,
 * not each lease (a thousand channels cost one write, not a thousand): a lease stands while its
 * own expiry or its holder's heartbeat has not passed. A holder that renews late (paused, or the
 * store away, for two thirds of the lease or more) may have been taken over: it then renews each
 * lease by compare-and-set, as a taker writes it, so exactly one of them wins each channel.
 */
export class ChannelLeases {
  /** Leases held, by channel key, with the stored version to renew or release them by. */
  private readonly held = new Map<string, number>();
  /** Acquisitions under way, by channel key: a second caller shares the first one's answer. */
  private readonly acquiring = new Map<string, Promise<LeaseHolder | undefined>>();
  private timer: TimerHandle | undefined;
  private disposed = false;
  /** When every lease held was last known to stand for a whole lease time (a renewal, or the first lease). */
  private renewedAt: number | undefined;

  constructor(
    private readonly options: {
      documents: DocumentStore;
      clock: Clock;
      owner: string;
      ttlMs?: number;
      logger: Logger;
      /** Called when a held lease was taken by another runtime (ours lapsed): drop the channel. */
      onLost: (key: string) => void;
      /** Told of each renewal a timer starts (work in flight, for the runtime's idle and settle). */
      onRenewal?: (done: Promise<void>) => void;
    },
  ) {}

  private get ttlMs(): number {
    return this.options.ttlMs ?? DEFAULT_LEASE_TTL_MS;
  }

  /** How many leases this runtime holds. */
  get heldCount(): number {
    return this.held.size;
  }

  /** True when this runtime holds the channel's lease. */
  holds(key: string): boolean {
    return this.held.has(key);
  }

  /**
   * Takes (or keeps) the channel's lease. Resolves `undefined` once held, or the holder when
   * another runtime holds a lease that has not lapsed.
   */
  acquire(key: string): Promise<LeaseHolder | undefined> {
    // Two parts of this runtime may ask at once (a reply resent after a restart and a new message):
    // racing each other, the loser would see its own lease as another process's.
    const pending = this.acquiring.get(key);
    if (pending) return pending;
    const attempt = this.tryAcquire(key).finally(() => this.acquiring.delete(key));
    this.acquiring.set(key, attempt);
    return attempt;
  }

  private async tryAcquire(key: string): Promise<LeaseHolder | undefined> {
    const { documents, clock, owner } = this.options;
    const now = clock.now();
    const stored = await documents.get<LeaseValue>(LEASES, key);
    const current = stored?.value;
    if (current && current.owner !== owner) {
      const until = await this.standsUntil(current, now);
      if (until > now && ownerAlive(current.owner)) return { owner: current.owner, expiresAt: until };
    }
    try {
      const version = await documents.put<LeaseValue>(
        LEASES,
        key,
        { owner, expiresAt: now + this.ttlMs },
        { expectedVersion: stored?.version ?? 0, at: now },
      );
      this.held.set(key, version);
      this.renewedAt ??= now;
      // Expected after a crash or a stop without release; worth a line, not a warning.
      if (current && current.owner !== owner)
        this.options.logger.info(
          { channel: key, previousOwner: current.owner },
          'took over a channel whose lease had lapsed',
        );
      this.arm();
      return undefined;
    } catch (error) {
      if (!TroupeError.isInstance(error) || error.code !== 'TROUPE_STORE_CONFLICT') throw error;
      // Another runtime took it between our read and our write.
      const winner = await documents.get<LeaseValue>(LEASES, key);
      return { owner: winner?.value.owner ?? 'another runtime', expiresAt: winner?.value.expiresAt ?? now };
    }
  }

  /** Gives the channel's lease up (the channel was written and dropped). */
  async release(key: string): Promise<void> {
    const version = this.held.get(key);
    if (version === undefined) return;
    this.held.delete(key);
    await this.options.documents.delete(LEASES, key, { expectedVersion: version }).catch(() => false);
  }

  /** Until when another runtime's lease stands: its own expiry, or its holder's heartbeat. */
  private async standsUntil(lease: LeaseValue, now: number): Promise<number> {
    if (lease.expiresAt > now) return lease.expiresAt;
    const heartbeat = await this.options.documents.get<HeartbeatValue>(HEARTBEATS, lease.owner);
    return Math.max(lease.expiresAt, heartbeat?.value.expiresAt ?? 0);
  }

  /**
   * Renews this runtime's heartbeat, which keeps every lease it holds. Late (two thirds of the
   * lease or more since the last renewal), it also renews each lease by compare-and-set: a lease
   * someone else took meanwhile is lost (see `onLost`). After a heartbeat or a lease the store
   * refused, the next renewal is late too.
   */
  async renew(): Promise<void> {
    const { clock, documents, owner, logger } = this.options;
    const now = clock.now();
    const late = this.renewedAt === undefined || now - this.renewedAt >= (2 * this.ttlMs) / 3;
    try {
      await documents.put<HeartbeatValue>(HEARTBEATS, owner, { expiresAt: now + this.ttlMs }, { at: now });
    } catch (error) {
      // The store is away: the next renewal tries again, late, so it renews each lease too.
      logger.warn({ err: error }, 'could not renew this runtime’s heartbeat');
      return;
    }
    if (late) {
      const known = await Promise.all(
        [...this.held].map(([key, version]) => this.renewOne(key, version, now)),
      );
      // A lease the store did not answer for may have been taken: the next renewal is late too.
      if (known.includes(false)) return;
    }
    this.renewedAt = now;
  }

  /** Renews one lease by compare-and-set; false when the store failed (nothing is known of it). */
  private async renewOne(key: string, version: number, now: number): Promise<boolean> {
    const { documents, owner, logger } = this.options;
    try {
      const next = await documents.put<LeaseValue>(
        LEASES,
        key,
        { owner, expiresAt: now + this.ttlMs },
        { expectedVersion: version, at: now },
      );
      if (this.held.has(key)) this.held.set(key, next);
      return true;
    } catch (error) {
      if (TroupeError.isInstance(error) && error.code === 'TROUPE_STORE_CONFLICT') {
        this.held.delete(key);
        logger.warn({ channel: key }, 'lost the lease of a channel to another runtime; dropping it');
        this.options.onLost(key);
        return true;
      }
      // The store is away: keep the lease and try again at the next renewal.
      logger.warn({ channel: key, err: error }, 'could not renew a channel lease');
      return false;
    }
  }

  /** Releases every lease held, stops renewing and removes the heartbeat. */
  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.timer) this.options.clock.clearTimer(this.timer);
    this.timer = undefined;
    const { documents, owner } = this.options;
    await Promise.all([
      ...[...this.held.keys()].map((key) => this.release(key)),
      this.renewedAt === undefined ? undefined : documents.delete(HEARTBEATS, owner).catch(() => false),
    ]);
  }

  /**
   * Keeps one renewal timer while any lease is held, a third of the lease after `from` (the last
   * renewal's start, not its end: time that moved while the store wrote does not make the next
   * renewal late).
   */
  private arm(from = this.options.clock.now()): void {
    if (this.timer || this.disposed) return;
    const { clock } = this.options;
    this.timer = clock.setTimer(from + Math.floor(this.ttlMs / 3), () => {
      this.timer = undefined;
      if (this.disposed) return;
      const started = clock.now();
      const done = this.renew().finally(() => {
        if (this.held.size > 0) this.arm(started);
      });
      this.options.onRenewal?.(done);
    });
  }
}

/** A lease owner's name for this runtime: host, process id and a random part. */
export function leaseOwner(random: string): string {
  return `${hostname()}:${process.pid}:${random}`;
}

/**
 * False only when the owner is a process on this host that no longer exists (it crashed): its
 * lease need not be waited out, so a restart takes its channels back at once. An owner on another
 * host is taken to be alive until its lease lapses.
 */
function ownerAlive(owner: string): boolean {
  const parts = owner.split(':');
  if (parts.length < 3) return true;
  const pid = Number(parts.at(-2));
  const host = parts.slice(0, -2).join(':');
  if (host !== hostname() || !Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
