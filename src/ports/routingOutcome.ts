import type { TroupeErrorCode } from './errorCodes.js';
import type { ChannelRef, ResponseOrigin } from './outgoingResponse.js';

/** One message the transport took (a long text goes out as several parts). */
export interface SentPart {
  index: number;
  kind: 'text' | 'voice' | 'attachment';
  /** The platform's id for the message. */
  messageId: string;
  /** Send attempts this part needed (1 when it went through first time). */
  attempts: number;
}

/**
 * What the routing actor reports for every response it was given (the specified typed outcome,
 * replacing RESPONSE_SENT / ROUTING_ERROR attributes). It is published as an event; nothing else
 * is written anywhere by routing.
 */
export interface RoutingOutcome {
  idempotencyKey: string;
  channel: ChannelRef;
  origin: ResponseOrigin;
  /** False only when routing never tried (no transport for the channel kind, or nothing sendable). */
  attempted: boolean;
  /** True when every part was taken by the transport. */
  sent: boolean;
  /** What was sent, in order. */
  parts: SentPart[];
  /** True when speech was requested but failed and the text went instead. */
  voiceFellBackToText: boolean;
  /** True when the outbox showed this key was already settled, so nothing was sent again. */
  duplicate: boolean;
  /** Why it was not (fully) sent. */
  error?: { code: TroupeErrorCode; message: string; retryable: boolean };
  /** When routing finished (epoch ms). */
  at: number;
}
