import { setMaxListeners } from 'node:events';
import { Subject } from 'rxjs';
import type { z } from 'zod';
import { zodIssues } from '../config/zodIssues.js';
import { MIN_SPLIT_LENGTH, splitText } from '../delivery/splitText.js';
import { textWithUnsentFiles } from '../delivery/unsentFileNotes.js';
import type { Logger } from '../logging/logger.js';
import type { Clock, TimerHandle } from '../ports/clock.js';
import type { ImmediateOutboxWrites, Outbox, OutboxEntry, OutboxSettlement } from '../ports/outbox.js';
import { isSendable, type OutgoingResponse, outgoingResponseSchema } from '../ports/outgoingResponse.js';
import type { RoutingOutcome, SentPart } from '../ports/routingOutcome.js';
import type { SpeechSynthesizer } from '../ports/speech.js';
import {
  type Transport,
  TransportError,
  type TransportMessage,
  type TransportReceipt,
} from '../ports/transport.js';
import { describe, isTroupeError, type TroupeError } from '../ports/troupeError.js';

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

/** How long one send may take before it is aborted, unless the transport says (default 30 s). */
export const DEFAULT_SEND_TIMEOUT_MS = 30_000;

/** Called with a delivery's outcome as it is published, before the delivery's promise resolves. */
export type OutcomeHandler = (outcome: RoutingOutcome) => void;

/** What the routing actor needs. */
export interface RoutingActorOptions {
  transports: readonly Transport[];
  outbox: Outbox;
  clock: Clock;
  logger: Logger;
  speech?: SpeechSynthesizer;
  retry?: Partial<RetryPolicy>;
  /**
   * How long one send may take before its signal is aborted and it counts as a retryable
   * `TROUPE_TRANSPORT_TIMEOUT` (default 30 s). A transport's own `limits.sendTimeoutMs` wins.
   */
  sendTimeoutMs?: number;
}

/**
 * Sends that started at the same instant with the same timeout share a deadline, so they share
 * one abort controller (an `AbortSignal` costs more to make than the rest of a send).
 */
interface SendCohort {
  deadline: number;
  timeoutMs: number;
  controller: AbortController;
}

/** One send in flight, so the watchdog or `abandon` can end it even if the transport never answers. */
class SendInFlight {
  /** Set as the send starts. */
  result!: Promise<TransportReceipt>;
  fail!: (error: unknown) => void;

  constructor(readonly cohort: SendCohort) {}
}

interface PlannedPart {
  index: number;
  kind: SentPart['kind'];
  message: TransportMessage;
}

type Failure = NonNullable<RoutingOutcome['error']>;

/** The unit of work a delivery is counted as, told what it waits for (see `WorkTracker`). */
export interface DeliveryWork {
  waitOn(wait: 'queue' | 'transport'): void;
}

/** A delivery's place in its channel's queue. */
interface DeliverySlot {
  /** The unit of work the delivery is counted as, if the caller counts it. */
  unit?: DeliveryWork | undefined;
  queueKey: string;
  /** The response's idempotency key. */
  key: string;
  /**
   * Lets the channel's next delivery start once this one has asked for its settlement (an outbox
   * that keeps writes in order); absent, the next one waits for this one to end.
   */
  passTurn?: (() => void) | undefined;
}

/**
 * The routing actor (transport only). It consumes nothing but {@link OutgoingResponse}:
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
  private readonly sendTimeoutMs: number;
  /**
   * Per channel, what its next delivery waits for (the last one queued: its end, or its passing
   * the turn on an outbox that keeps writes in order), and how many deliveries are in its queue.
   */
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly queued = new Map<string, number>();
  /** Deliveries in progress by key, so one response is never delivered twice at once. */
  private readonly inProgress = new Map<string, Promise<RoutingOutcome>>();
  /** Callers to tell of an outcome as it is published, by key. */
  private readonly handlers = new Map<string, OutcomeHandler>();
  private readonly sending = new Set<SendInFlight>();
  private cohort: SendCohort | undefined;
  private watchdog: { handle: TimerHandle; due: number } | undefined;
  /** Set by {@link RoutingActor.abandon}: nothing more is sent, nothing in flight is settled. */
  private abandoned: TroupeError | undefined;
  /** Aborted by {@link RoutingActor.abandon}: ends retries waiting for their backoff. */
  private stopController: AbortController | undefined;

  constructor(private readonly options: RoutingActorOptions) {
    for (const t of options.transports) this.register(t);
    this.retry = { ...defaultRetryPolicy, ...options.retry };
    this.sendTimeoutMs = options.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
  }

  /**
   * Registers (or replaces) the transport for a channel kind.
   *
   * @throws TransportError `TROUPE_TRANSPORT_LIMIT_INVALID` when its text limit is below what
   *   splitting needs ({@link MIN_SPLIT_LENGTH} characters) or its send timeout is not a positive
   *   finite number of milliseconds.
   */
  register(transport: Transport): void {
    const problem = limitsProblem(transport);
    if (problem) throw new TransportError('TROUPE_TRANSPORT_LIMIT_INVALID', problem, { retryable: false });
    this.transports.set(transport.kind, transport);
  }

  /** The transport serving a channel kind, if any. */
  transportFor(kind: string): Transport | undefined {
    return this.transports.get(kind);
  }

  /** Whether a transport here serves the channel (see {@link Transport.serves}). */
  servesChannel(channel: { kind: string; id: string }): boolean {
    const transport = this.transports.get(channel.kind);
    if (!transport) return false;
    try {
      return transport.serves?.(channel.id) ?? true;
    } catch (error) {
      this.options.logger.warn(
        { err: error, channel },
        'a transport failed to say whether it serves a channel',
      );
      return false;
    }
  }

  /**
   * Whether a transport here serves the channel of an unsettled entry. The entry was read back
   * from a store: one whose channel is not a channel at all is left where it is, not resent.
   */
  private serves(entry: OutboxEntry): boolean {
    const channel: unknown = (entry.response as Partial<OutgoingResponse> | null | undefined)?.channel;
    if (typeof channel !== 'object' || channel === null) return false;
    const { kind, id } = channel as { kind?: unknown; id?: unknown };
    return typeof kind === 'string' && typeof id === 'string' && this.servesChannel({ kind, id });
  }

  /** Sends in flight right now (each part is one send). */
  get sendsInFlight(): number {
    return this.sending.size;
  }

  /** Delivers one response; resolves with its outcome (also published). Never rejects. */
  route(response: OutgoingResponse): Promise<RoutingOutcome> {
    return this.start(response, undefined, false, undefined);
  }

  /**
   * Delivers a response the runtime made itself (prepared, or validated on the way in), so it is
   * not validated again; `onOutcome` gets the outcome as it is published, before the returned
   * promise resolves, so the caller applies it at once and in order.
   */
  routePrepared(
    response: OutgoingResponse,
    onOutcome: OutcomeHandler,
    unit?: DeliveryWork,
  ): Promise<RoutingOutcome> {
    return this.start(response, undefined, true, onOutcome, unit);
  }

  /**
   * Sends an outbox entry that was recorded but not settled, from its first part not taken. If
   * the same key is already being delivered, joins that delivery instead of starting another.
   */
  resume(entry: OutboxEntry, onOutcome?: OutcomeHandler): Promise<RoutingOutcome> {
    return this.start(entry.response, entry, false, onOutcome);
  }

  /**
   * Sends again every outbox entry that was recorded but never settled (after a crash), from the
   * first part the transport had not taken. Transports that deduplicate on the part key drop the
   * one part that may have gone out just before the crash. `onOutcome` gets each outcome as it
   * is published. `mayResend`, when given, decides per entry (the runtime resends only for channels
   * whose lease it can take, so a reply another live process is still sending is not sent twice).
   */
  async recover(
    onOutcome?: OutcomeHandler,
    mayResend?: (entry: OutboxEntry) => Promise<boolean>,
  ): Promise<RoutingOutcome[]> {
    const all = await this.options.outbox.unsettled();
    // Before `mayResend`, which takes the channel's lease: a channel this process does not serve
    // is left to the one that does, lease and entry alike.
    const served = all.filter((entry) => this.serves(entry));
    if (served.length < all.length)
      this.options.logger.info(
        { count: all.length - served.length },
        'leaving unsettled outbox entries of channels no transport here serves',
      );
    const entries = mayResend ? await filterAsync(served, mayResend) : served;
    if (entries.length > 0)
      this.options.logger.info({ count: entries.length }, 'resending unsettled outbox entries');
    return Promise.all(entries.map((entry) => this.resume(entry, onOutcome)));
  }

  /**
   * Stops sending for good (the runtime is stopping past its deadline): sends in flight are
   * aborted, retries waiting for their backoff end, and their outbox entries are left unsettled,
   * so the next start sends them. Their deliveries resolve with a `TROUPE_TRANSPORT_ABORTED`
   * outcome that is published but given to no `onOutcome` (nothing was settled). Idempotent.
   */
  abandon(): void {
    if (this.abandoned) return;
    const error = new TransportError(
      'TROUPE_TRANSPORT_ABORTED',
      'The runtime stopped before this reply was sent; it stays in the outbox and is sent on the next start.',
      { retryable: true },
    );
    this.abandoned = error;
    this.stopController?.abort(error);
    for (const flight of this.sending) {
      flight.cohort.controller.abort(error);
      flight.fail(error);
    }
    this.sending.clear();
    this.disarmWatchdog();
  }

  private start(
    response: OutgoingResponse,
    resumed: OutboxEntry | undefined,
    validated: boolean,
    onOutcome: OutcomeHandler | undefined,
    unit?: DeliveryWork,
  ): Promise<RoutingOutcome> {
    // Not validated yet: `route` may be handed anything, and answers even `null` with an outcome.
    const key = (response as Partial<OutgoingResponse> | null)?.idempotencyKey ?? '';
    const running = this.inProgress.get(key);
    if (running) {
      if (onOutcome)
        void running.then((outcome) => {
          if (!this.abandoned) onOutcome(outcome);
        });
      return running;
    }
    if (onOutcome) this.handlers.set(key, onOutcome);
    // Responses to one channel go out in order: after everything already queued for it.
    const queueKey = `${response?.channel?.kind}\u0000${response?.channel?.id}`;
    const previous = this.queues.get(queueKey);
    this.queued.set(queueKey, (this.queued.get(queueKey) ?? 0) + 1);
    // Only an outbox that keeps writes in order lets the next delivery start before this one ends.
    let passTurn: (() => void) | undefined;
    const turnPassed = this.options.outbox.writesInOrder
      ? new Promise<void>((resolve) => {
          passTurn = resolve;
        })
      : undefined;
    const run = this.deliver(previous, { queueKey, key, passTurn, unit }, response, resumed, validated);
    // A delivery that ended without waiting (nothing to send) has already forgotten itself.
    if (this.queued.has(queueKey)) {
      this.queues.set(queueKey, turnPassed ?? run);
      this.inProgress.set(key, run);
    }
    return run;
  }

  /** Forgets a delivery that ended: its key, and its channel's queue once nothing is left in it. */
  private ended(queueKey: string, key: string): void {
    this.inProgress.delete(key);
    this.handlers.delete(key);
    const left = (this.queued.get(queueKey) ?? 1) - 1;
    if (left > 0) {
      this.queued.set(queueKey, left);
    } else {
      this.queued.delete(queueKey);
      this.queues.delete(queueKey);
    }
  }

  /** Waits for the channel's previous delivery to pass its turn, delivers, and forgets the delivery. */
  private async deliver(
    previous: Promise<unknown> | undefined,
    slot: DeliverySlot,
    input: OutgoingResponse,
    resumed: OutboxEntry | undefined,
    validated: boolean,
  ): Promise<RoutingOutcome> {
    try {
      if (previous) {
        // Blocked by the delivery before it, not working: a test runtime settles past it.
        slot.unit?.waitOn('queue');
        await previous.then(undefined, () => undefined);
        slot.unit?.waitOn('transport');
      }
      const { clock, logger, outbox } = this.options;
      let response = input;
      if (!validated) {
        const parsed = outgoingResponseSchema.safeParse(input);
        if (!parsed.success) return this.publish(invalidResponse(input, parsed.error, clock.now()));
        response = parsed.data;
      }
      const transport = this.transports.get(response.channel.kind);
      if (!transport) return this.publish(noTransport(response, clock.now()));
      if (!isSendable(response)) return this.publish(nothingToSend(response, clock.now()));

      let entry: Pick<OutboxEntry, 'sentParts' | 'settled'> | undefined = resumed;
      try {
        if (!entry) {
          const recording = this.record(response);
          const recorded = recording instanceof Promise ? await recording : recording;
          entry = recorded.entry;
          if (!recorded.created && entry.settled) {
            logger.debug({ key: response.idempotencyKey }, 'response already settled; not sending again');
            return this.publish(alreadySettled(response, entry, clock.now()));
          }
        }
      } catch (error) {
        // Sending without a record could send twice after a crash: refuse instead. Abandoned
        // while a record was retried: no `onOutcome`, as for an aborted send (the channel's turn
        // stays in flight, for the next start).
        return this.publish(unrecorded(response, error, clock.now()), !this.abandoned);
      }

      try {
        // Speech is the only step of planning that waits for anything.
        const { parts, voiceFellBackToText } = response.voice
          ? await this.plan(response, response.voice, transport)
          : this.planText(response, transport, [], false);
        const sent: SentPart[] = [...entry.sentParts];
        let failure: Failure | undefined;
        // The last part is noted with the settlement (one store write, not two).
        let lastPart: SentPart | undefined;
        const last = parts[parts.length - 1];
        for (const part of parts) {
          if (hasPart(sent, part.index)) continue;
          if (resumed) part.message.resumedFrom = resumed.recordedAt;
          // The first attempt inline; retries (rare) in their own loop.
          let result: { messageId: string; attempts: number } | { error: Failure };
          let receipt: unknown;
          let thrown: unknown;
          let failed = false;
          const flight = this.beginSend(transport, part.message);
          try {
            receipt = await flight.result;
          } catch (error) {
            thrown = error;
            failed = true;
          } finally {
            this.endSend(flight);
          }
          if (failed) result = await this.retrySend(transport, part, thrown);
          else result = firstAttempt(transport, receipt);
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
          if (outbox.immediate) this.notePartNow(outbox.immediate, response.idempotencyKey, record);
          else if (part === last) lastPart = record;
          else await this.notePart(response.idempotencyKey, record);
        }
        if (sent.length > 1) sent.sort((a, b) => a.index - b.index);
        const at = clock.now();
        if (this.abandoned) {
          // Stopped mid-delivery: the entry stays unsettled, so the next start sends what is left.
          if (lastPart) await this.notePart(response.idempotencyKey, lastPart);
          return this.publish(
            abandonedMidway(response, sent, voiceFellBackToText, this.abandoned, at),
            false,
          );
        }
        const settlement: OutboxSettlement = failure
          ? { at, sent: false, error: failure }
          : { at, sent: true };
        if (failure)
          logger.warn(
            { key: response.idempotencyKey, code: failure.code },
            `send failed: ${failure.message}`,
          );
        const outcome = delivered(response, sent, voiceFellBackToText, failure, at);
        const done = this.settleAndPublish(slot, settlement, lastPart, outcome);
        return done instanceof Promise ? await done : done;
      } catch (error) {
        // Nothing inside routing may leave a delivery hanging or a promise rejected: whatever
        // went wrong (a transport's limits changed under it, a bug) is this response's outcome.
        return this.failUnexpectedly(response, error);
      }
    } finally {
      slot.passTurn?.();
      this.ended(slot.queueKey, slot.key);
    }
  }

  /**
   * Settles the entry and publishes the outcome once the settlement is stored; on an outbox that
   * keeps writes in order, passes the channel's turn and publishes at once, and resolves once it
   * is stored (what the outcome leads to, the channel's next reply included, is written after the
   * settlement and joins its commit). At once on an outbox that answers at once.
   */
  private settleAndPublish(
    slot: DeliverySlot,
    settlement: OutboxSettlement,
    lastPart: SentPart | undefined,
    outcome: RoutingOutcome,
  ): RoutingOutcome | Promise<RoutingOutcome> {
    const settled = this.settle(slot.key, settlement, lastPart);
    if (!settled) return this.publish(outcome);
    if (!this.options.outbox.writesInOrder) return settled.then(() => this.publish(outcome));
    slot.passTurn?.();
    const published = this.publish(outcome);
    return settled.then(() => published);
  }

  /**
   * Settles an entry: undefined when done at once (or failed at once, logged); otherwise a promise
   * that resolves once the settlement is stored or its failure logged (it never rejects).
   */
  private settle(
    key: string,
    settlement: OutboxSettlement,
    lastPart: SentPart | undefined,
  ): Promise<void> | undefined {
    const { outbox, logger } = this.options;
    const couldNot = (error: unknown) => logger.warn({ key, err: error }, 'outbox could not settle an entry');
    try {
      if (!outbox.immediate) return outbox.settle(key, settlement, lastPart).catch(couldNot);
      outbox.immediate.settle(key, settlement);
    } catch (error) {
      couldNot(error);
    }
    return undefined;
  }

  /** Notes in the outbox that the transport took a part (a failure is logged: the send stands). */
  private async notePart(key: string, part: SentPart): Promise<void> {
    try {
      await this.options.outbox.markPartSent(key, part);
    } catch (error) {
      this.options.logger.warn({ key, err: error }, 'outbox could not note a sent part');
    }
  }

  /** As {@link RoutingActor.notePart}, on an outbox that answers at once. */
  private notePartNow(outbox: ImmediateOutboxWrites, key: string, part: SentPart): void {
    try {
      outbox.markPartSent(key, part);
    } catch (error) {
      this.options.logger.warn({ key, err: error }, 'outbox could not note a sent part');
    }
  }

  /** Splits a response asking for voice into transport messages: speech, or its text when it fails. */
  private async plan(
    response: OutgoingResponse,
    voice: NonNullable<OutgoingResponse['voice']>,
    transport: Transport,
  ): Promise<{ parts: PlannedPart[]; voiceFellBackToText: boolean }> {
    const attachments: NonNullable<TransportMessage['attachments']> = [];
    let voiceFellBackToText = false;
    const speech = this.options.speech;
    if (!transport.limits.voice || !speech) {
      voiceFellBackToText = true;
    } else {
      try {
        const audio = await speech.synthesize({
          text: voice.text,
          ...(voice.voiceId ? { voiceId: voice.voiceId } : {}),
        });
        attachments.push({ name: `voice.${audio.extension}`, mediaType: audio.mediaType, data: audio.audio });
      } catch (error) {
        voiceFellBackToText = true;
        this.options.logger.warn(
          { key: response.idempotencyKey, code: isTroupeError(error) ? error.code : undefined },
          'speech failed; sending the text instead',
        );
      }
    }
    return this.planText(response, transport, attachments, voiceFellBackToText);
  }

  /** The parts of a response once any speech is done: text split to the limit, attachments first. */
  private planText(
    response: OutgoingResponse,
    transport: Transport,
    attachments: NonNullable<TransportMessage['attachments']>,
    voiceFellBackToText: boolean,
  ): { parts: PlannedPart[]; voiceFellBackToText: boolean } {
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
    const said = response.text ?? (voiceFellBackToText ? response.voice?.text : undefined);
    // A transport that takes no files still tells the person which files the answer had.
    const text =
      (transport.limits.attachments ? said : textWithUnsentFiles(said, response.attachments)) ?? '';
    const chunks = splitText(text, transport.limits.maxTextLength);
    const count = Math.max(chunks.length, attachments.length > 0 ? 1 : 0);
    const parts: PlannedPart[] = [];
    for (let index = 0; index < count; index += 1) {
      const chunk = chunks[index];
      const first = index === 0;
      const message: TransportMessage = {
        idempotencyKey: `${response.idempotencyKey}#${index}`,
        channelId: response.channel.id,
      };
      if (chunk !== undefined) message.text = chunk;
      if (first && attachments.length > 0) message.attachments = attachments;
      if (response.speaker) message.speaker = response.speaker;
      if (first && response.replyTo) message.replyTo = response.replyTo;
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

  /** Retries a part whose first attempt failed with `firstError`, with backoff, while retryable. */
  private async retrySend(
    transport: Transport,
    part: PlannedPart,
    firstError: unknown,
  ): Promise<{ messageId: string; attempts: number } | { error: Failure }> {
    const { clock, logger } = this.options;
    let error = firstError;
    for (let attempt = 1; ; attempt += 1) {
      const failure = toFailure(error);
      if (this.abandoned) return { error: failure };
      if (!failure.retryable || attempt >= this.retry.maxAttempts) {
        return {
          error:
            attempt > 1 ? { ...failure, message: `${failure.message} (after ${attempt} attempts)` } : failure,
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
      // A stop ends the wait early (the sleep rejects); the send below then fails at once with the
      // stop's error, without reaching the transport, and the check above ends the retries.
      await clock.sleep(delay, this.stopSignal()).catch(() => undefined);
      const flight = this.beginSend(transport, part.message);
      try {
        const receipt: unknown = await flight.result;
        return isReceipt(receipt)
          ? { messageId: receipt.messageId, attempts: attempt + 1 }
          : { error: unconfirmed(transport, receipt) };
      } catch (next) {
        error = next;
      } finally {
        this.endSend(flight);
      }
    }
  }

  /** Records a response: at once when the outbox answers at once; tried again after a retryable failure. */
  private record(response: OutgoingResponse): Recorded | Promise<Recorded> {
    let recording: Recorded | Promise<Recorded>;
    try {
      recording = this.recordOnce(response);
    } catch (error) {
      return this.recordAgain(response, error);
    }
    return recording instanceof Promise
      ? recording.catch((error: unknown) => this.recordAgain(response, error))
      : recording;
  }

  /** One try: the outbox's immediate record when it has one (it throws), else its promise. */
  private recordOnce(response: OutgoingResponse): Recorded | Promise<Recorded> {
    const { clock, outbox } = this.options;
    return outbox.immediate
      ? outbox.immediate.record(response, clock.now())
      : outbox.record(response, clock.now());
  }

  /**
   * Records a response again after a retryable failure (a store briefly away, busy or timed out),
   * with the sends' backoff, up to their attempts: recording twice is safe (the key finds the
   * entry, which says whether it was settled), sending unrecorded is not. Throws the last error.
   */
  private async recordAgain(response: OutgoingResponse, firstError: unknown): Promise<Recorded> {
    const { clock, logger } = this.options;
    const key = response.idempotencyKey;
    let error = firstError;
    for (let attempt = 1; ; attempt += 1) {
      const retryable = isTroupeError(error) && error.retryable;
      if (!retryable || this.abandoned || attempt >= this.retry.maxAttempts)
        throw attempt > 1 ? new RecordGaveUp(error, attempt) : error;
      const delay = Math.min(this.retry.maxDelayMs, this.backoff(key, attempt));
      logger.info(
        { key, attempt, delayMs: delay, code: (error as TroupeError).code },
        'outbox could not record the response; retrying',
      );
      await clock.sleep(delay, this.stopSignal()).catch(() => undefined);
      if (this.abandoned) throw error;
      try {
        return await this.recordOnce(response);
      } catch (next) {
        error = next;
      }
    }
  }

  /** A signal aborted when routing is abandoned (made once, on the first retry that waits). */
  private stopSignal(): AbortSignal {
    this.stopController ??= new AbortController();
    return this.stopController.signal;
  }

  /**
   * Starts one send through the transport with an abort signal. Its `result` ends when the
   * transport answers, when its timeout passes (a retryable `TROUPE_TRANSPORT_TIMEOUT`, the signal
   * aborted), or when routing is abandoned, whether or not the transport heeds the signal. Every
   * send is ended with {@link RoutingActor.endSend}.
   */
  private beginSend(transport: Transport, message: TransportMessage): SendInFlight {
    const { clock } = this.options;
    const timeoutMs = transport.limits.sendTimeoutMs ?? this.sendTimeoutMs;
    const deadline = clock.now() + timeoutMs;
    let cohort = this.cohort;
    if (!cohort || cohort.deadline !== deadline || cohort.controller.signal.aborted) {
      cohort = { deadline, timeoutMs, controller: new AbortController() };
      // Every send started in the same millisecond shares this signal, and each request a
      // transport makes listens to it: many listeners are expected, not a leak to warn about.
      setMaxListeners(0, cohort.controller.signal);
      this.cohort = cohort;
    }
    const flight = new SendInFlight(cohort);
    const abandoned = this.abandoned;
    flight.result = new Promise<TransportReceipt>((resolve, reject) => {
      flight.fail = reject;
      if (abandoned) reject(abandoned);
      else transport.send(message, flight.cohort.controller.signal).then(resolve, reject);
    });
    if (abandoned) return flight;
    this.sending.add(flight);
    if (!this.watchdog || this.watchdog.due > deadline) this.armWatchdog(deadline);
    return flight;
  }

  private endSend(flight: SendInFlight): void {
    if (this.sending.delete(flight) && this.sending.size === 0) this.disarmWatchdog();
  }

  /** Ends the sends whose deadline passed, then waits for the next deadline. */
  private onWatchdog(): void {
    this.watchdog = undefined;
    const now = this.options.clock.now();
    let next: number | undefined;
    for (const flight of this.sending) {
      const { cohort } = flight;
      if (cohort.deadline <= now) {
        const error = new TransportError(
          'TROUPE_TRANSPORT_TIMEOUT',
          `The transport did not answer within ${cohort.timeoutMs} ms; the send was aborted.`,
          { retryable: true },
        );
        if (!cohort.controller.signal.aborted) cohort.controller.abort(error);
        this.sending.delete(flight);
        flight.fail(error);
      } else if (next === undefined || cohort.deadline < next) {
        next = cohort.deadline;
      }
    }
    if (next !== undefined) this.armWatchdog(next);
  }

  private armWatchdog(due: number): void {
    this.disarmWatchdog();
    const handle = this.options.clock.setTimer(due, () => this.onWatchdog());
    this.watchdog = { handle, due };
  }

  private disarmWatchdog(): void {
    if (!this.watchdog) return;
    this.options.clock.clearTimer(this.watchdog.handle);
    this.watchdog = undefined;
  }

  /** Exponential backoff with jitter seeded by the key: spread out, yet replayable. */
  private backoff(key: string, attempt: number): number {
    const exp = this.retry.baseDelayMs * 2 ** (attempt - 1);
    let hash = 0;
    for (let i = 0; i < key.length; i += 1) hash = (Math.imul(hash, 31) + key.charCodeAt(i)) >>> 0;
    const jitter = 0.75 + ((hash + attempt * 7919) % 500) / 1000;
    return Math.round(exp * jitter);
  }

  /** Settles a response that failed for a reason routing did not plan for, and reports it. */
  private failUnexpectedly(response: OutgoingResponse, error: unknown): RoutingOutcome {
    const { clock, logger, outbox } = this.options;
    const failure = toFailure(error);
    const at = clock.now();
    logger.error({ key: response.idempotencyKey, err: error }, `delivery failed: ${failure.message}`);
    const settlement: OutboxSettlement = { at, sent: false, error: failure };
    try {
      const settled = outbox.immediate
        ? outbox.immediate.settle(response.idempotencyKey, settlement)
        : outbox.settle(response.idempotencyKey, settlement);
      if (settled instanceof Promise)
        settled.catch((err: unknown) =>
          logger.warn({ key: response.idempotencyKey, err }, 'outbox could not settle an entry'),
        );
    } catch (err) {
      logger.warn({ key: response.idempotencyKey, err }, 'outbox could not settle an entry');
    }
    return this.publish({
      ...base(response),
      attempted: true,
      sent: false,
      parts: [],
      voiceFellBackToText: false,
      duplicate: false,
      error: failure,
      at,
    });
  }

  /** Tells observers, then the caller waiting for it (unless nothing was settled). */
  private publish(outcome: RoutingOutcome, settled = true): RoutingOutcome {
    this.outcomes$.next(outcome);
    const handler = this.handlers.get(outcome.idempotencyKey);
    if (handler && settled) {
      this.handlers.delete(outcome.idempotencyKey);
      handler(outcome);
    }
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

/** The outcome of a response that is not a valid {@link OutgoingResponse}: not sent. */
function invalidResponse(input: OutgoingResponse, error: z.ZodError, at: number): RoutingOutcome {
  return unattempted(input, at, {
    code: 'TROUPE_RESPONSE_INVALID',
    message: `The response is not a valid OutgoingResponse: ${zodIssues(error)}`,
    retryable: false,
  });
}

/** The outcome of a response to a channel kind no transport serves: not sent. */
function noTransport(response: OutgoingResponse, at: number): RoutingOutcome {
  return unattempted(response, at, {
    code: 'TROUPE_TRANSPORT_MISSING',
    message: `No transport is registered for channel kind "${response.channel.kind}"; pass one to createRuntime({ transports }).`,
    retryable: false,
  });
}

/** The outcome of a response with nothing in it to send. */
function nothingToSend(response: OutgoingResponse, at: number): RoutingOutcome {
  return unattempted(response, at, {
    code: 'TROUPE_RESPONSE_EMPTY',
    message: 'The response has no text, voice or attachment to send.',
    retryable: false,
  });
}

/** What recording a response gives back: its entry (as far as routing reads it) and whether it is new. */
type Recorded = { entry: Pick<OutboxEntry, 'sentParts' | 'settled'>; created: boolean };

/** The last failure of a record tried `attempts` times. */
class RecordGaveUp extends Error {
  constructor(
    readonly failure: unknown,
    readonly attempts: number,
  ) {
    super(describe(failure));
  }
}

/** The outcome of a response the outbox could not record: not sent. */
function unrecorded(response: OutgoingResponse, error: unknown, at: number): RoutingOutcome {
  const why =
    error instanceof RecordGaveUp
      ? `${describe(error.failure)} (after ${error.attempts} attempts)`
      : describe(error);
  return unattempted(response, at, {
    code: 'TROUPE_OUTBOX_UNAVAILABLE',
    message: `The outbox could not record the response, so it was not sent: ${why}`,
    retryable: true,
  });
}

/** The outcome of a response the outbox had settled already: not sent again. */
function alreadySettled(
  response: OutgoingResponse,
  entry: Pick<OutboxEntry, 'sentParts' | 'settled'>,
  at: number,
): RoutingOutcome {
  return {
    ...base(response),
    attempted: false,
    sent: (entry.settled as OutboxSettlement).sent,
    parts: entry.sentParts,
    voiceFellBackToText: false,
    duplicate: true,
    at,
  };
}

/** The outcome of a delivery routing was abandoned in the middle of (its entry stays unsettled). */
function abandonedMidway(
  response: OutgoingResponse,
  sent: SentPart[],
  voiceFellBackToText: boolean,
  error: TroupeError,
  at: number,
): RoutingOutcome {
  return {
    idempotencyKey: response.idempotencyKey,
    channel: response.channel,
    origin: response.origin,
    attempted: true,
    sent: false,
    parts: sent,
    voiceFellBackToText,
    duplicate: false,
    error: { code: error.code, message: error.message, retryable: true },
    at,
  };
}

/** The outcome of a delivery that ran to its end: every part sent, or `failure`. */
function delivered(
  response: OutgoingResponse,
  sent: SentPart[],
  voiceFellBackToText: boolean,
  failure: Failure | undefined,
  at: number,
): RoutingOutcome {
  const outcome: RoutingOutcome = {
    idempotencyKey: response.idempotencyKey,
    channel: response.channel,
    origin: response.origin,
    attempted: true,
    sent: failure === undefined,
    parts: sent,
    voiceFellBackToText,
    duplicate: false,
    at,
  };
  if (failure) outcome.error = failure;
  return outcome;
}

/** What a part's first attempt gave: its message id, or why it is not known to have gone out. */
function firstAttempt(
  transport: Transport,
  receipt: unknown,
): { messageId: string; attempts: number } | { error: Failure } {
  return isReceipt(receipt)
    ? { messageId: receipt.messageId, attempts: 1 }
    : { error: unconfirmed(transport, receipt) };
}

/** Why a transport's limits cannot be used, or undefined when they can. */
function limitsProblem(transport: Transport): string | undefined {
  const { maxTextLength, sendTimeoutMs } = transport.limits ?? {};
  if (!Number.isInteger(maxTextLength) || (maxTextLength as number) < MIN_SPLIT_LENGTH)
    return `The "${transport.kind}" transport's limits.maxTextLength must be a whole number of at least ${MIN_SPLIT_LENGTH} characters (routing splits longer texts); got ${String(maxTextLength)}.`;
  if (
    sendTimeoutMs !== undefined &&
    !(Number.isFinite(sendTimeoutMs) && sendTimeoutMs > 0 && sendTimeoutMs <= MAX_TIMER_MS)
  )
    return `The "${transport.kind}" transport's limits.sendTimeoutMs must be a number of milliseconds above 0 and at most ${MAX_TIMER_MS}; got ${String(sendTimeoutMs)}.`;
  return undefined;
}

/** The longest delay a Node timer holds (2^31 - 1 ms, about 24.8 days); longer ones fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/** The items `keep` says yes to, asked one at a time, in order. */
async function filterAsync<T>(items: readonly T[], keep: (item: T) => Promise<boolean>): Promise<T[]> {
  const kept: T[] = [];
  for (const item of items) if (await keep(item)) kept.push(item);
  return kept;
}

/** A receipt as the port promises it: an object with the platform's message id. */
function isReceipt(value: unknown): value is TransportReceipt {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { messageId?: unknown }).messageId === 'string' &&
    (value as { messageId: string }).messageId.length > 0
  );
}

/** A send that returned but proved nothing: it may or may not have gone out. */
function unconfirmed(transport: Transport, receipt: unknown): Failure {
  return {
    code: 'TROUPE_TRANSPORT_UNCONFIRMED',
    message: `The "${transport.kind}" transport returned ${receipt === undefined ? 'nothing' : 'no message id'} for a send, so it is unknown whether the message went out; it is not sent again (a transport must resolve with { messageId } or throw a TransportError).`,
    retryable: false,
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

/** Whether a part with this index was sent (a plain loop: a closure over the loop's part would cost a scope per part). */
function hasPart(sent: readonly SentPart[], index: number): boolean {
  for (const p of sent) if (p.index === index) return true;
  return false;
}
