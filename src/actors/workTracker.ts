/** What a unit of work waits for right now: the port (or the runtime's own step) it is in. */
export type WorkWait = 'model' | 'store' | 'transport' | 'lookup' | 'speech' | 'recovery' | 'queue';

/** What a unit of work is. */
export type WorkTask =
  | 'turn'
  | 'reply'
  | 'resend'
  | 'send'
  | 'load'
  | 'write'
  | 'passivate'
  | 'expire'
  | 'wakeups'
  | 'recovery';

/**
 * One unit of work still in flight, as {@link WorkTracker.pending} (and `runtime.pending()`) reports it.
 */
export interface PendingWork {
  task: WorkTask;
  /** The channel's key (`kind:id`), when the work belongs to one. */
  channel?: string;
  /** The avatar whose turn or reply it is, if any. */
  avatarId?: string;
  /** What it waits for now. */
  waitingOn: WorkWait;
  /**
   * True when that wait leaves the process (a network model, a real transport, a networked store):
   * it may never answer. Internal waits (the offline model, a memory or SQLite store, an in-process
   * database, a recording transport) always end; under load they are only slow.
   */
  external: boolean;
  /** Wall-clock milliseconds since the wait began (work parked on a simulated clock shows its last wait). */
  forMs: number;
  /** One line, e.g. `nova's turn in test:room is waiting on the model for 31 s`. */
  description: string;
}

/** Says whether a wait leaves the process; the runtime knows its ports (unknown ones count as external). */
export type ExternalWait = (wait: WorkWait, channel: string | undefined) => boolean;

/** A unit in words: `nova's turn in test:room`, `loading test:room`, `outbox recovery`. */
function whatOf(task: WorkTask, channel: string | undefined, avatarId: string | undefined): string {
  const where = channel ?? 'a channel';
  const whose = avatarId !== undefined ? `${avatarId}'s` : 'a';
  switch (task) {
    case 'turn':
      return `${whose} turn in ${where}`;
    case 'reply':
      return `${whose} reply in ${where}`;
    case 'resend':
      return `${whose} resent reply in ${where}`;
    case 'send':
      return `a response.send to ${where}`;
    case 'load':
      return `loading ${where}`;
    case 'write':
      return `a write of ${where}`;
    case 'passivate':
      return `passivating ${where}`;
    case 'expire':
      return 'expiring idle channels';
    case 'wakeups':
      return 'reading channel wake-ups';
    case 'recovery':
      return 'outbox recovery';
  }
}

const WAIT_WORDS: Record<WorkWait, string> = {
  model: 'the model',
  store: 'the store',
  transport: 'the transport',
  lookup: 'the lookup tool',
  speech: 'speech',
  recovery: 'the outbox and transports',
  queue: 'the reply before it in its channel',
};

/**
 * One unit of work in flight: what it is (task, channel, avatar) and what it waits for now. The
 * code running it moves its wait along ({@link WorkUnit.waitOn}), so a test runtime can tell work
 * that will end (internal) from work waiting on the world (external), and name it.
 */
export class WorkUnit {
  /** Set by the tracker once the unit ended. */
  ended = false;
  private since: number;

  constructor(
    private readonly tracker: WorkTracker,
    readonly task: WorkTask,
    public wait: WorkWait,
    readonly channel: string | undefined,
    readonly avatarId: string | undefined,
  ) {
    this.since = performance.now();
  }

  /** The unit now waits for `wait` (a model call, a store write...). */
  waitOn(wait: WorkWait): void {
    if (this.ended) return;
    this.wait = wait;
    this.since = performance.now();
    this.tracker.changed();
  }

  /** This unit as reported. */
  describe(external: ExternalWait, now = performance.now()): PendingWork {
    const forMs = Math.max(0, now - this.since);
    const isExternal = external(this.wait, this.channel);
    return {
      task: this.task,
      ...(this.channel !== undefined ? { channel: this.channel } : {}),
      ...(this.avatarId !== undefined ? { avatarId: this.avatarId } : {}),
      waitingOn: this.wait,
      external: isExternal,
      forMs,
      description: `${whatOf(this.task, this.channel, this.avatarId)} is waiting on ${WAIT_WORDS[this.wait]}${isExternal ? '' : ' (in process)'} for ${formatSeconds(forMs)}`,
    };
  }
}

function formatSeconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/**
 * The units of work in flight (generations, sends, writes, recovery), each with what it is and
 * what it waits for, so the runtime can drain on `stop()`, a test runtime can settle on the idle
 * signal rather than the wall clock, and what is still pending can be named.
 */
export class WorkTracker {
  private readonly units = new Set<WorkUnit>();
  private waiters: (() => void)[] = [];
  private readonly listeners = new Set<() => void>();

  /** @param external whether a wait leaves the process (default: every wait does) */
  constructor(private readonly external: ExternalWait = () => true) {}

  /** Work in flight, including work parked on the clock. */
  get active(): number {
    return this.units.size;
  }

  /**
   * Starts counting a unit of work (end it with {@link WorkTracker.track} or
   * {@link WorkTracker.end}). Made before the work starts, so the work can mark its waits.
   */
  begin(task: WorkTask, wait: WorkWait, channel?: string, avatarId?: string): WorkUnit {
    const unit = new WorkUnit(this, task, wait, channel, avatarId);
    this.units.add(unit);
    return unit;
  }

  /** Ends a unit (idempotent). */
  end(unit: WorkUnit): void {
    if (unit.ended) return;
    unit.ended = true;
    this.units.delete(unit);
    if (this.units.size === 0 && this.waiters.length > 0) {
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
    }
    this.changed();
  }

  /**
   * Runs `work` as `unit`, which ends when `work` settles; never lets its rejection escape
   * unobserved: `onError` gets it, if given. Returns `work`.
   */
  track<T>(work: Promise<T>, unit: WorkUnit, onError?: (error: unknown) => void): Promise<T> {
    work.then(
      () => this.end(unit),
      (error: unknown) => {
        this.end(unit);
        onError?.(error);
      },
    );
    return work;
  }

  /** Resolves when no work is in flight. */
  drained(): Promise<void> {
    if (this.units.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Every unit in flight, oldest first. */
  pending(): PendingWork[] {
    const now = performance.now();
    return [...this.units].map((u) => u.describe(this.external, now));
  }

  /** Calls `listener` whenever a unit ends or changes what it waits for; returns the unsubscribe. */
  onProgress(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Tells the listeners that something moved. */
  changed(): void {
    if (this.listeners.size === 0) return;
    for (const listener of this.listeners) listener();
  }
}
