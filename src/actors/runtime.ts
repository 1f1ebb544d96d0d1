import { filter, type Observable, type Subscription } from 'rxjs';
import { TroupeError } from '../ports/troupeError.js';
import { channelKey } from './channelKey.js';
import { ChannelLifecycle } from './channelLifecycle.js';
import type { InspectionEvent } from './inspectionEvent.js';
import { RuntimeFrontDoor } from './runtimeFrontDoor.js';
import type { ResolvedRuntimeOptions, Runtime, StopOptions } from './runtimeOptions.js';
import { DEFAULT_STOP_DEADLINE_MS, shutDownRuntime } from './runtimeShutdown.js';
import { type RuntimeWiring, wireRuntime } from './runtimeWiring.js';

export { channelFromKey, channelKey } from './channelKey.js';

/**
 * Starts the runtime core on resolved options (the entry point, `createRuntime`, chooses the
 * defaults): one actor per channel in a registry, a routing actor over the transports, the turn
 * executor over the model and history, all wired by RxJS streams. Its parts: the shared wiring
 * (runtimeWiring.ts), the channels' lifecycle (channelLifecycle.ts), the front door that events
 * enter by (runtimeFrontDoor.ts) and the shutdown (runtimeShutdown.ts).
 *
 * @throws TroupeError `TROUPE_AVATARS_INVALID` when the avatar list does not validate, and
 *   `TROUPE_AVATAR_MODEL_INVALID` when an avatar's `model:` cannot be built.
 */
export function startRuntime(options: ResolvedRuntimeOptions): Runtime {
  const wiring = wireRuntime(options);
  const channels = new ChannelLifecycle(wiring);
  const outcomeSubscription = reportOutcomes(wiring);
  channels.scheduleStoredWakeups();
  if (options.recoverOnStart ?? true) channels.resendUnsettled();
  const frontDoor = new RuntimeFrontDoor(wiring, channels);
  const { routing, registry, tracker } = wiring;
  return {
    send: frontDoor.send,
    connect: (events$) => frontDoor.connect(events$),
    outcomes$: routing.outcomes$.asObservable(),
    inspection$: wiring.inspection$.asObservable(),
    errors$: wiring.errors$.asObservable(),
    get avatars() {
      return wiring.cast.list;
    },
    avatarChanges$: wiring.cast.changes$.asObservable(),
    createAvatar: (request) =>
      wiring.stopping ? Promise.reject(stoppedError()) : wiring.creator.create(request),
    forgetAvatar: (nameOrId) =>
      wiring.stopping ? Promise.reject(stoppedError()) : wiring.creator.forget(nameOrId),
    model: wiring.model,
    modelOf: (avatarId) => wiring.avatarModels.get(avatarId) ?? wiring.model,
    store: wiring.store,
    usage: wiring.usage,
    view: (channel) => registry.get(channelKey(channel))?.view(),
    open: (channel) => frontDoor.open(channel),
    activeChannels: () => [...registry.keys()],
    whenIdle: () => tracker.drained(),
    get inFlight() {
      return tracker.active;
    },
    pending: () => tracker.pending(),
    onProgress: (listener) => tracker.onProgress(listener),
    stop(stopOptions: StopOptions = {}) {
      const deadlineMs = stopOptions.deadlineMs ?? options.stopDeadlineMs ?? DEFAULT_STOP_DEADLINE_MS;
      wiring.stopping ??= shutDownRuntime(wiring, channels, outcomeSubscription, deadlineMs);
      return wiring.stopping;
    },
  };
}

/**
 * Observers see every routing outcome on `inspection$`, and every failed delivery on `errors$`;
 * the channel actor that routed a reply applies its outcome itself.
 */
function reportOutcomes({ routing, inspecting, inspect, errors$ }: RuntimeWiring): Subscription {
  return routing.outcomes$.subscribe((outcome) => {
    if (inspecting()) inspect({ type: 'routing.outcome', at: outcome.at, outcome });
    // An empty response is nothing to send, not a fault.
    if (outcome.error && outcome.error.code !== 'TROUPE_RESPONSE_EMPTY') {
      errors$.next(
        new TroupeError(outcome.error.code, outcome.error.message, {
          retryable: outcome.error.retryable,
          details: { channel: outcome.channel, idempotencyKey: outcome.idempotencyKey },
        }),
      );
    }
  });
}

function stoppedError(): TroupeError {
  return new TroupeError(
    'TROUPE_RUNTIME_STOPPED',
    'The runtime is stopping; avatars are neither created nor forgotten now.',
  );
}

/** Inspection events of one type, typed. */
export function inspectionOf<T extends InspectionEvent['type']>(
  stream: Observable<InspectionEvent>,
  type: T,
): Observable<Extract<InspectionEvent, { type: T }>> {
  return stream.pipe(filter((e): e is Extract<InspectionEvent, { type: T }> => e.type === type));
}
