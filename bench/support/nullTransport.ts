/**
 * A transport that takes every message at once and keeps nothing: what routing costs without a
 * platform behind it. The receipt's id is a counter (routing only passes it on).
 */
import type {
  Transport,
  TransportLimits,
  TransportMessage,
  TransportReceipt,
} from '../../src/ports/transport.js';

export class NullTransport implements Transport {
  readonly kind: string;
  readonly limits: TransportLimits;
  /** Messages taken so far (a count, nothing else). */
  taken = 0;

  constructor(kind: string, limits: Partial<TransportLimits> = {}) {
    this.kind = kind;
    this.limits = { maxTextLength: 2000, voice: false, attachments: false, ...limits };
  }

  send(_message: TransportMessage): Promise<TransportReceipt> {
    this.taken += 1;
    return Promise.resolve({ messageId: `n${this.taken}` });
  }
}
