import type { DeliveryErrorCode } from './errorCodes.js';
import { TroupeError, type TroupeErrorOptions } from './troupeError.js';

/** One message for a transport: a single part of an {@link OutgoingResponse}, already split to fit. */
export interface TransportMessage {
  /** Unique per part (`<response key>#<index>`); a transport that supports it deduplicates on it. */
  idempotencyKey: string;
  channelId: string;
  text?: string;
  /** Audio or files for this part. */
  attachments?: { name: string; mediaType: string; data?: Uint8Array; url?: string }[];
  /** Who speaks (a transport that can, shows this name and picture). */
  speaker?: { avatarId: string; name: string; emoji?: string | undefined; pictureUrl?: string | undefined };
  replyTo?: { messageId: string };
  /**
   * Set when the part belongs to a response an earlier run recorded (the record's time, epoch ms)
   * and did not settle: it may have reached the platform just before a crash. A transport whose
   * platform has no idempotent send can look for it there before sending it again.
   */
  resumedFrom?: number;
}

/** What a transport reports for a message it took. */
export interface TransportReceipt {
  /** The platform's id for the sent message. */
  messageId: string;
  /** True when the transport had already taken this idempotency key and did not send again. */
  duplicate?: boolean;
}

/** What a transport can carry. */
export interface TransportLimits {
  /** Longest text one message may have; longer texts are split by routing. */
  maxTextLength: number;
  /** Whether audio attachments can be sent (otherwise voice falls back to text). */
  voice: boolean;
  /** Whether file attachments can be sent. */
  attachments: boolean;
  /**
   * How long one send may take before routing aborts it and counts a retryable
   * `TROUPE_TRANSPORT_TIMEOUT` (default: routing's `sendTimeoutMs`, 30 s).
   */
  sendTimeoutMs?: number;
}

/**
 * The port routing sends through, one per channel kind (`discord`, `terminal`, ...). A transport
 * only delivers: it never decides what to say. It throws {@link TransportError} on failure.
 */
export interface Transport {
  readonly kind: string;
  readonly limits: TransportLimits;
  /**
   * True when a send never leaves the process and always ends (the terminal and recording
   * transports). Otherwise a send counts as external: a test runtime waits for it only so long
   * without an answer (`settleLimitMs`).
   */
  readonly local?: boolean;
  /**
   * Whether this transport delivers to the channel of its kind with this id. A reply an earlier
   * run left unsettled is sent again only by a runtime whose transport serves its channel; the
   * others leave it in the outbox for the one that does (a terminal chat in channel `two` must
   * not take channel `one`'s reply). Absent: every channel of its kind.
   */
  serves?(channelId: string): boolean;
  /**
   * Sends one message. `signal` is aborted when the send outlives its timeout
   * (`limits.sendTimeoutMs`) or the runtime stops past its deadline: pass it to the request and
   * stop. Routing does not wait for a transport that ignores it, but the platform may then still
   * take the message; the part key (`idempotencyKey`) lets it drop the resend.
   */
  send(message: TransportMessage, signal?: AbortSignal): Promise<TransportReceipt>;
}

const TRANSPORT_ERROR = Symbol.for('troupe.error.transport');

/**
 * A failed send. `retryable` says whether trying again may help (rate limits, timeouts, 5xx);
 * `retryAfterMs` is the platform's own hint and is honoured over the backoff.
 */
export class TransportError extends TroupeError {
  readonly retryAfterMs: number | undefined;

  constructor(
    code: DeliveryErrorCode,
    message: string,
    options: TroupeErrorOptions & { retryAfterMs?: number } = {},
  ) {
    super(code, message, options);
    this.name = 'TransportError';
    Object.defineProperty(this, TRANSPORT_ERROR, { value: true });
    this.retryAfterMs = options.retryAfterMs;
  }

  /** True for a {@link TransportError} from any copy of Troupe. */
  static override isInstance(error: unknown): error is TransportError {
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as Record<symbol, unknown>)[TRANSPORT_ERROR] === true
    );
  }
}
