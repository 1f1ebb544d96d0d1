import type { DeliveryErrorCode } from '../ports/errorCodes.js';
import {
  type Transport,
  TransportError,
  type TransportLimits,
  type TransportMessage,
  type TransportReceipt,
} from '../ports/transport.js';

/** A message the recording transport took. */
export interface RecordedMessage extends TransportMessage {
  /** The id the transport gave it. */
  messageId: string;
}

/** A failure to inject: thrown for the next matching sends. */
export interface InjectedFailure {
  /** A delivery code (default `TROUPE_TRANSPORT_UNAVAILABLE`). */
  code?: DeliveryErrorCode;
  retryable?: boolean;
  retryAfterMs?: number;
  /** How many sends fail (default 1). */
  times?: number;
}

/**
 * A transport that records what it is given, for tests and embedders' own tests. It deduplicates
 * on the idempotency key like a platform with idempotent sends would (a key it already took
 * returns the same message id and is not recorded again), and can be told to fail.
 */
export class RecordingTransport implements Transport {
  readonly kind: string;
  /** Sends stay in this process (a test runtime waits for them however long they take). */
  readonly local = true;
  readonly limits: TransportLimits;
  /** Every message taken, in order. */
  readonly sent: RecordedMessage[] = [];
  /** Every send attempt, including failed and duplicate ones. */
  readonly attempts: TransportMessage[] = [];
  private readonly byKey = new Map<string, string>();
  private failures: InjectedFailure[] = [];
  private seq = 0;

  private readonly retain: number | undefined;

  /**
   * @param options.retain keep only the last `retain` messages, attempts and idempotency keys
   *   (a bounded mode for long runs; a key older than that is no longer deduplicated)
   */
  constructor(options: { kind?: string; limits?: Partial<TransportLimits>; retain?: number } = {}) {
    this.kind = options.kind ?? 'test';
    if (options.retain !== undefined && !(Number.isInteger(options.retain) && options.retain >= 0))
      throw new RangeError(`retain must be a whole number, 0 or more, not ${options.retain}`);
    this.retain = options.retain;
    this.limits = { maxTextLength: 2000, voice: true, attachments: true, ...options.limits };
  }

  /** Makes the next send(s) fail. Failures queue up in order. */
  failNext(failure: InjectedFailure = {}): this {
    this.failures.push({ ...failure });
    return this;
  }

  async send(message: TransportMessage): Promise<TransportReceipt> {
    this.attempts.push(message);
    const known = this.byKey.get(message.idempotencyKey);
    if (known !== undefined) return { messageId: known, duplicate: true };
    const failure = this.failures[0];
    if (failure) {
      failure.times = (failure.times ?? 1) - 1;
      if (failure.times <= 0) this.failures.shift();
      throw new TransportError(failure.code ?? 'TROUPE_TRANSPORT_UNAVAILABLE', 'injected failure', {
        retryable: failure.retryable ?? true,
        ...(failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}),
      });
    }
    this.seq += 1;
    const messageId = `${this.kind}-${this.seq}`;
    this.byKey.set(message.idempotencyKey, messageId);
    this.sent.push({ ...message, messageId });
    if (this.retain !== undefined) this.bound(this.retain);
    return { messageId };
  }

  /** Keeps the last `retain` of everything recorded (dropped in batches). */
  private bound(retain: number): void {
    const trim = <T>(list: T[]) => {
      if (list.length >= Math.max(1, retain * 2)) list.splice(0, list.length - retain);
    };
    trim(this.sent);
    trim(this.attempts);
    if (this.byKey.size >= Math.max(1, retain * 2)) {
      let drop = this.byKey.size - retain;
      for (const key of this.byKey.keys()) {
        if (drop-- <= 0) break;
        this.byKey.delete(key);
      }
    }
  }

  /** The texts sent, in order (parts of one response are separate entries). */
  texts(): string[] {
    return this.sent.map((m) => m.text ?? '');
  }
}
