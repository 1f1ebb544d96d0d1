import { isSendable, type OutgoingResponse } from '../ports/outgoingResponse.js';
import type { PreparationRequest } from './preparation.js';

/** The reply a person gets when they asked and nothing else was produced. */
export const FALLBACK_TEXT = "I'm here, but I couldn't put a reply together just now. Please try again.";

/** What the guarantee decided. */
export interface FeedbackDecision {
  response: OutgoingResponse | undefined;
  /** True when the guarantee supplied the fallback. */
  guaranteed: boolean;
}

/**
 * The feedback guarantee (`FeedbackGuaranteeSystem`): a request a person made always gets
 * an answer. When a turn answers a person (`userRequested`) and preparation produced nothing
 * sendable, it supplies a minimal, safe fallback. Autonomous turns (greetings, follow-ups,
 * initiative, avatar-to-avatar cascades) may stay silent. Pure: it never writes history.
 */
export function ensureFeedback(
  prepared: OutgoingResponse | undefined,
  request: PreparationRequest,
  userRequested: boolean,
): FeedbackDecision {
  if (isSendable(prepared) || !userRequested) return { response: prepared, guaranteed: false };
  return {
    guaranteed: true,
    response: {
      idempotencyKey: request.idempotencyKey,
      channel: request.channel,
      ...(request.speaker ? { speaker: request.speaker } : {}),
      ...(request.replyTo ? { replyTo: request.replyTo } : {}),
      text: FALLBACK_TEXT,
      attachments: [],
      origin: { ...request.origin, kind: 'fallback' },
      preparedAt: request.at,
    },
  };
}
