import type { Observable, Subscription } from 'rxjs';
import { zodIssues } from '../config/zodIssues.js';
import { prepareOutgoingResponse } from '../delivery/preparation.js';
import type { FloorView } from '../floor/channelFloor.js';
import type { ChannelRef } from '../ports/outgoingResponse.js';
import { plainError } from '../ports/plainError.js';
import { TroupeError } from '../ports/troupeError.js';
import { channelKey } from './channelKey.js';
import type { ChannelLifecycle } from './channelLifecycle.js';
import { parseRuntimeEvent } from './parseRuntimeEvent.js';
import type { RuntimeEvent } from './runtimeEvents.js';
import type { SendOptions, SendResult } from './runtimeOptions.js';
import type { RuntimeWiring } from './runtimeWiring.js';

/**
 * Where events enter the runtime: `send` reads an event (refusing what it cannot read, with a
 * `TroupeError` on `errors$`), routes a ready response, or hands the event to its channel's actor;
 * `connect` sends every event of a stream; `open` activates a channel and waits until it is loaded.
 */
export class RuntimeFrontDoor {
  constructor(
    private readonly wiring: RuntimeWiring,
    private readonly channels: ChannelLifecycle,
  ) {}

  readonly send = (input: unknown, options?: SendOptions): SendResult => {
    if (this.wiring.stopping)
      return this.reject(
        new TroupeError('TROUPE_RUNTIME_STOPPED', 'The runtime is stopping and accepts no more events.'),
      );
    let parsed: ReturnType<typeof parseRuntimeEvent>;
    try {
      parsed = parseRuntimeEvent(input);
    } catch (error) {
      // A getter or Proxy trap that throws: the event cannot be read, so it is refused, not thrown.
      // What it threw may be as hostile (a Proxy, a throwing toString), so only a plain copy is kept.
      const cause = plainError(error);
      return this.reject(
        new TroupeError(
          'TROUPE_EVENT_INVALID',
          `Rejected an event that could not be read (${cause.message}); send plain data.`,
          { cause },
        ),
      );
    }
    if (!parsed.success) {
      const type = typeOf(input);
      return this.reject(
        new TroupeError(
          'TROUPE_EVENT_INVALID',
          `Rejected ${typeof type === 'string' ? `a "${type}"` : 'an'} event: ${zodIssues(parsed.error, '(event)')}`,
          { details: { type } },
        ),
      );
    }
    return this.accept(parsed.data as RuntimeEvent, options?.requireOwnership === true);
  };

  /** Sends every event of the stream; a stream that fails is reported on `errors$`. */
  connect(events$: Observable<unknown>): Subscription {
    return events$.subscribe({
      next: (event) => {
        this.send(event);
      },
      error: (error: unknown) =>
        this.reject(
          // The stream's source may fail with anything, a Proxy included: keep a plain copy.
          new TroupeError('TROUPE_STREAM_FAILED', 'An inbound event stream failed and was disconnected.', {
            cause: plainError(error),
          }),
        ),
    });
  }

  /** Activates the channel and resolves with its view once its state is loaded. */
  async open(channel: ChannelRef): Promise<FloorView> {
    if (this.wiring.stopping)
      throw new TroupeError('TROUPE_RUNTIME_STOPPED', 'The runtime is stopping and opens no channels.');
    const actor = this.channels.activate(channel);
    await actor.whenReady();
    return actor.view() as FloorView;
  }

  /**
   * Routes a ready response, or hands the event to its channel's actor (stamped with its time), or
   * to the process holding its channel.
   */
  private accept(event: RuntimeEvent, requireOwnership: boolean): SendResult {
    const { clock, tracker, routing, cast } = this.wiring;
    const avatarsById = cast.byId;
    const at = event.at ?? clock.now();
    if (event.type === 'response.send') {
      // Upstream already decided: preparation leaves it alone and routing sends it.
      const response = prepareOutgoingResponse({
        existing: event.response,
        request: {
          idempotencyKey: event.response.idempotencyKey,
          channel: event.response.channel,
          origin: {},
          voicePolicy: { mode: 'off' },
          at,
        },
      });
      // Validated on the way in (the event schema holds the response schema).
      if (response) {
        const unit = tracker.begin('send', 'transport', channelKey(response.channel));
        tracker.track(routing.routePrepared(response, this.channels.settle, unit), unit);
      }
      return { accepted: true };
    }
    if (
      (event.type === 'avatar.summon' || event.type === 'avatar.dismiss') &&
      !avatarsById.has(event.avatarId)
    ) {
      return this.reject(
        new TroupeError(
          'TROUPE_AVATAR_UNKNOWN',
          `No avatar has id "${event.avatarId}"; known ids: ${[...avatarsById.keys()].join(', ')}.`,
        ),
      );
    }
    // The parsed event is the runtime's own copy: stamped in place.
    event.at = at;
    const handover = this.channels.handover;
    if (handover !== undefined) {
      const key = channelKey(event.channel);
      if (handover.heldElsewhere(key, clock.now())) {
        if (requireOwnership)
          return this.reject(
            new TroupeError(
              'TROUPE_CHANNEL_OWNED',
              `Channel ${key} is handled by another Troupe process sharing this store; the event asked for ownership and was refused. Send it without requireOwnership to hand it over.`,
              { retryable: true, details: { channel: event.channel } },
            ),
          );
        handover.handOver(key, [event as RuntimeEvent & { at: number }]);
        return { accepted: true, handedOver: true };
      }
      if (requireOwnership) this.channels.requireOwnership(event);
    }
    const actor = this.channels.activate(event.channel);
    actor.receive(event as RuntimeEvent & { at: number });
    this.channels.retireIfFinished(actor);
    return { accepted: true };
  }

  private reject(error: TroupeError): SendResult {
    this.wiring.logger.warn({ err: error }, error.message);
    this.wiring.errors$.next(error);
    return { accepted: false, error };
  }
}

/** An event's `type`, if it can be read safely (for the error message). */
function typeOf(input: unknown): string | undefined {
  try {
    const type = typeof input === 'object' && input !== null ? (input as { type?: unknown }).type : undefined;
    // Only text goes into the error: any other value may throw when a logger or handler reads it.
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined;
  }
}
