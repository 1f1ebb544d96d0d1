import { Subject } from 'rxjs';
import { splitText } from '../delivery/splitText.js';
import type { Logger } from '../logging/logger.js';
import type { Clock } from '../ports/clock.js';
import type { Outbox, OutboxEntry } from '../ports/outbox.js';
import { isSendable, type OutgoingResponse, outgoingResponseSchema } from '../ports/outgoingResponse.js';
import type { RoutingOutcome, SentPart } from '../ports/routingOutcome.js';
import type { SpeechSynthesizer } from '../ports/speech.js';
import { type Transport, TransportError, type TransportMessage } from '../ports/transport.js';
import { describe, isTroupeError } from '../ports/troupeError.js';

/** How routing retries a failed send. */
export interface RetryPolicy {
  /** Attempts per part, including the first (default 4). */
  maxAttempts: number;
  /** First backoff (default 500 ms); doubles each attempt. */
  baseDelayMs: number;
  /** Longest wait between attempts, also the cap on a platform's retry-after (default 30 s). */
  maxDelayMs: number;
}

/** Defaults for {@link RetryPolicy}. */
export const defaultRetryPolicy: RetryPolicy = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 30_000 };

/** What the routing actor needs. */
export interface RoutingActorOptions {
  transports: readonly Transport[];
  outbox: Outbox;
  clock: Clock;
  logger: Logger;
  speech?: SpeechSynthesizer;
  retry?: Partial<RetryPolicy>;
}

interface PlannedPart {
  index: number;
  kind: SentPart['kind'];
  message: TransportMessage;
}

type Failure = NonNullable<RoutingOutcome['error']>;

/**
 * The routing actor (seed 004, transport only). It consumes nothing but {@link OutgoingResponse}:
 * records it in the outbox, turns a voice request into audio (or falls back to the text), splits
 * text to the transport's limit, sends each part through the transport registered for the
 * channel kind, retries retryable failures with backoff (honouring retry-after), settles the
 * outbox entry and publishes a typed {@link RoutingOutcome} on `outcomes$`. It never reads model
 * output or domain objects and never writes history. Responses to one channel go out in order;
 * channels are served concurrently.
 */
export class RoutingActor {
  /** Every outcome, as an event. */
  readonly outcomes$ = new Subject<RoutingOutcome>();
  private readonly transports = new Map<string, Transport>();
  private readonly retry: RetryPolicy;
  /** The tail of each channel's send queue. */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(private readonly options: RoutingActorOptions) {
    for (const t of options.transports) this.transports.set(t.kind, t);
    this.retry = { ...defaultRetryPolicy, ...options.retry };
  }

  /** Registers (or replaces) the transport for a channel kind. */
  register(transport: Transport): void {
    this.transports.set(transport.kind, transport);
  }

  /** The transport serving a channel kind, if any. */
  transportFor(kind: string): Transport | undefined {
    return this.transports.get(kind);
  }

  /** Delivers one response; resolves with its outcome (also published). Never rejects. */
  route(response: OutgoingResponse): Promise<RoutingOutcome> {
    return this.once(response.idempotencyKey, () =>
      this.enqueue(response, () => this.deliver(response, undefined)),
    );
  }

  /**
   * Sends an outbox entry that was recorded but not settled, from its first part not taken. If
   * the same key is already being delivered, joins that delivery instead of starting another.
   */
  resume(entry: OutboxEntry): Promise<RoutingOutcome> {
    return this.once(entry.key, () =>
      this.enqueue(entry.response, () => this.deliver(entry.response, entry)),
    );
  }

  /**
   * Sends again every outbox entry that was recorded but never settled (after a crash), from the
   * first part the transport had not taken. Transports that deduplicate on the part key drop the
   * one part that may have gone out just before the crash.
   */
  async recover(): Promise<RoutingOutcome[]> {
    const entries = await this.options.outbox.unsettled();
    if (entries.length > 0)
      this.options.logger.info({ count: entries.length }, 'resending unsettled outbox entries');
    return Promise.all(entries.map((entry) => this.resume(entry)));
  }

  /** Deliveries in progress by key, so one response is never delivered twice at once. */
  private readonly inProgress = new Map<string, Promise<RoutingOutcome>>();

  private once(key: string, start: () => Promise<RoutingOutcome>): Promise<RoutingOutcome> {
    const running = this.inProgress.get(key);
    if (running) return running;
    const run = start().finally(() => this.inProgress.delete(key));
    this.inProgress.set(key, run);
    return run;
  }

  /** Runs `work` after everything already queued for the response's channel. */
  private enqueue(response: OutgoingResponse, work: () => Promise<RoutingOutcome>): Promise<RoutingOutcome> {
    const queueKey = `${response.channel?.kind}\u0000${response.channel?.id}`;
    const previous = this.queues.get(queueKey) ?? Promise.resolve();
    const run = previous.then(work);
    const tail = run.catch(() => undefined);
    this.queues.set(queueKey, tail);
    void tail.then(() => {
      if (this.queues.get(queueKey) === tail) this.queues.delete(queueKey);
    });
    return run;
  }

  private async deliver(input: OutgoingResponse, resumed: OutboxEntry | undefined): Promise<RoutingOutcome> {
    const { clock, logger, outbox } = this.options;
    const parsed = outgoingResponseSchema.safeParse(input);
    if (!parsed.success) {
      return this.publish(
        unattempted(input, clock.now(), {
          code: 'TROUPE_RESPONSE_INVALID',
          message: `The response is not a valid OutgoingResponse: ${parsed.error.issues
            .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
            .join('; ')}`,
          retryable: false,
        }),
      );
    }
    const response = parsed.data;
    const transport = this.transports.get(response.channel.kind);
    if (!transport) {
      return this.publish(
        unattempted(response, clock.now(), {
          code: 'TROUPE_TRANSPORT_MISSING',
          message: `No transport is registered for channel kind "${response.channel.kind}"; pass one to createRuntime({ transports }).`,
          retryable: false,
        }),
      );
    }
    if (!isSendable(response)) {
      return this.publish(
        unattempted(response, clock.now(), {
          code: 'TROUPE_RESPONSE_EMPTY',
          message: 'The response has no text, voice or attachment to send.',
          retryable: false,
        }),
      );
    }

    let entry = resumed;
    try {
      if (!entry) {
        const recorded = await outbox.record(response, clock.now());
        entry = recorded.entry;
        if (!recorded.created && entry.settled) {
          logger.debug({ key: response.idempotencyKey }, 'response already settled; not sending again');
          return this.publish({
            ...base(response),
            attempted: false,
            sent: entry.settled.sent,
            parts: entry.sentParts,
            voiceFellBackToText: false,
            duplicate: true,
            at: clock.now(),
          });
        }
      }
    } catch (error) {
      // Sending without a record could send twice after a crash: refuse instead.
      return this.publish(
        unattempted(response, clock.now(), {
          code: 'TROUPE_OUTBOX_UNAVAILABLE',
          message: `The outbox could not record the response, so it was not sent: ${describe(error)}`,
          retryable: true,
        }),
      );
    }

    const { parts, voiceFellBackToText } = await this.plan(response, transport);
    const sent: SentPart[] = [...entry.sentParts];
    const done = new Set(sent.map((p) => p.index));
    let failure: Failure | undefined;
    for (const part of parts) {
      if (done.has(part.index)) continue;
      const result = await this.sendWithRetry(transport, part);
      if ('error' in result) {
        failure = result.error;
        break;
      }
      const record: SentPart = {
        index: part.index,
        kind: part.kind,
        messageId: result.messageId,
        attempts: result.attempts,
      };
      sent.push(record);
      await outbox
        .markPartSent(response.idempotencyKey, record)
        .catch((error: unknown) =>
          logger.warn({ key: response.idempotencyKey, err: error }, 'outbox could not note a sent part'),
        );
    }
    sent.sort((a, b) => a.index - b.index);
    const at = clock.now();
    await outbox
      .settle(response.idempotencyKey, {
        at,
        sent: failure === undefined,
        ...(failure ? { error: failure } : {}),
      })
      .catch((error: unknown) =>
        logger.warn({ key: response.idempotencyKey, err: error }, 'outbox could not settle an entry'),
      );
    if (failure)
      logger.warn({ key: response.idempotencyKey, code: failure.code }, `send failed: ${failure.message}`);
    return this.publish({
      ...base(response),
      attempted: true,
      sent: failure === undefined,
      parts: sent,
      voiceFellBackToText,
      duplicate: false,
      ...(failure ? { error: failure } : {}),
      at,
    });
  }

  /** Splits a response into transport messages; speech happens here, falling back to text. */
  private async plan(
    response: OutgoingResponse,
    transport: Transport,
  ): Promise<{ parts: PlannedPart[]; voiceFellBackToText: boolean }> {
    const attachments: NonNullable<TransportMessage['attachments']> = [];
    let voiceFellBackToText = false;
    if (response.voice) {
      const speech = this.options.speech;
      if (!transport.limits.voice || !speech) {
        voiceFellBackToText = true;
      } else {
        try {
          const audio = await speech.synthesize({
            text: response.voice.text,
            ...(response.voice.voiceId ? { voiceId: response.voice.voiceId } : {}),
          });
          attachments.push({
            name: `voice.${audio.extension}`,
            mediaType: audio.mediaType,
            data: audio.audio,
          });
        } catch (error) {
          voiceFellBackToText = true;
          this.options.logger.warn(
            { key: response.idempotencyKey, code: isTroupeError(error) ? error.code : undefined },
            'speech failed; sending the text instead',
          );
        }
      }
    }
    if (transport.limits.attachments) {
      for (const a of response.attachments) {
        attachments.push({
          name: a.name,
          mediaType: a.mediaType,
          ...(a.dataBase64 !== undefined ? { data: Buffer.from(a.dataBase64, 'base64') } : {}),
          ...(a.url !== undefined ? { url: a.url } : {}),
        });
      }
    }
    const text = response.text ?? (voiceFellBackToText ? response.voice?.text : undefined) ?? '';
    const chunks = splitText(text, transport.limits.maxTextLength);
    const count = Math.max(chunks.length, attachments.length > 0 ? 1 : 0);
    const parts: PlannedPart[] = [];
    for (let index = 0; index < count; index += 1) {
      const chunk = chunks[index];
      const first = index === 0;
      const message: TransportMessage = {
        idempotencyKey: `${response.idempotencyKey}#${index}`,
        channelId: response.channel.id,
        ...(chunk !== undefined ? { text: chunk } : {}),
        ...(first && attachments.length > 0 ? { attachments } : {}),
        ...(response.speaker ? { speaker: response.speaker } : {}),
        ...(first && response.replyTo ? { replyTo: response.replyTo } : {}),
      };
      parts.push({
        index,
        kind:
          chunk !== undefined
            ? 'text'
            : attachments.some((a) => a.mediaType.startsWith('audio/'))
              ? 'voice'
              : 'attachment',
        message,
      });
    }
    return { parts, voiceFellBackToText };
  }

  private async sendWithRetry(
    transport: Transport,
    part: PlannedPart,
  ): Promise<{ messageId: string; attempts: number } | { error: Failure }> {
    const { clock, logger } = this.options;
    for (let attempt = 1; ; attempt += 1) {
      try {
        const receipt = await transport.send(part.message);
        return { messageId: receipt.messageId, attempts: attempt };
      } catch (error) {
        const failure = toFailure(error);
        if (!failure.retryable || attempt >= this.retry.maxAttempts) {
          return {
            error:
              attempt > 1
                ? { ...failure, message: `${failure.message} (after ${attempt} attempts)` }
                : failure,
          };
        }
        const hinted = TransportError.isInstance(error) ? error.retryAfterMs : undefined;
        const delay = Math.min(
          this.retry.maxDelayMs,
          typeof hinted === 'number' && hinted >= 0
            ? hinted
            : this.backoff(part.message.idempotencyKey, attempt),
        );
        logger.info(
          { key: part.message.idempotencyKey, attempt, delayMs: delay, code: failure.code },
          'send failed; retrying',
        );
        await clock.sleep(delay);
      }
    }
  }

  /** Exponential backoff with jitter seeded by the key: spread out, yet replayable. */
  private backoff(key: string, attempt: number): number {
    const exp = this.retry.baseDelayMs * 2 ** (attempt - 1);
    let hash = 0;
    for (let i = 0; i < key.length; i += 1) hash = (Math.imul(hash, 31) + key.charCodeAt(i)) >>> 0;
    const jitter = 0.75 + ((hash + attempt * 7919) % 500) / 1000;
    return Math.round(exp * jitter);
  }

  private publish(outcome: RoutingOutcome): RoutingOutcome {
    this.outcomes$.next(outcome);
    return outcome;
  }
}

function base(response: OutgoingResponse) {
  return { idempotencyKey: response.idempotencyKey, channel: response.channel, origin: response.origin };
}

function unattempted(response: OutgoingResponse, at: number, error: Failure): RoutingOutcome {
  return {
    idempotencyKey: response?.idempotencyKey ?? '',
    channel: response?.channel ?? { kind: '', id: '' },
    origin: response?.origin ?? { kind: 'notice' },
    attempted: false,
    sent: false,
    parts: [],
    voiceFellBackToText: false,
    duplicate: false,
    error,
    at,
  };
}

function toFailure(error: unknown): Failure {
  if (isTroupeError(error)) return { code: error.code, message: error.message, retryable: error.retryable };
  return {
    code: 'TROUPE_TRANSPORT_FAILED',
    message: `The transport failed unexpectedly: ${describe(error)}`,
    retryable: false,
  };
}
