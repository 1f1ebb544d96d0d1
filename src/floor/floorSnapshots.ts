import type { FloorSetup } from './floorSetup.js';
import { FLOOR_SNAPSHOT_FORMAT, FLOOR_SNAPSHOT_VERSION, type FloorSnapshot } from './floorSnapshotSchema.js';
import { type ClaimSpec, createFloorState, type FloorState } from './floorState.js';
import type { TurnContext } from './floorTypes.js';
import { restoredPresence, restoredThread, storedPresence, storedThread } from './storedMachines.js';

function entry<K, V>(key: K, value: V): [K, V] {
  return [key, value];
}

/** The floor state as its JSON snapshot: a deep copy, so the snapshot never changes with the floor. */
export function snapshotOf(state: FloorState): FloorSnapshot {
  const budget = state.budget;
  return structuredClone({
    format: FLOOR_SNAPSHOT_FORMAT,
    version: FLOOR_SNAPSHOT_VERSION,
    channelId: state.channelId,
    epoch: state.epoch,
    now: state.now,
    turnSeq: state.turnSeq,
    threadSeq: state.threadSeq,
    presences: [...state.presences].map(([id, snap]) => entry(id, storedPresence(snap.value, snap.context))),
    threads: [...state.threads].map(([id, snap]) => entry(id, storedThread(snap.value, snap.context))),
    endedThreads: [...state.endedThreads],
    inFlight: [...state.inFlight.values()].map(({ channelId: _channel, ...claim }) => claim),
    threadReservations: [...state.threadReservations],
    followUps: state.followUps.map((f) => ({ ...f })),
    deferred: [...state.deferred].map(([id, d]) => entry(id, { spec: d.spec, messageId: d.messageId })),
    pendingGreetings: [...state.pendingGreetings],
    departed: [...state.departed],
    arrivals: [...state.arrivals].map(([id, a]) => entry(id, { ...a })),
    threadBackoff: [...state.threadBackoff].map(([pair, b]) => entry(pair, { ...b })),
    // Kept only when there is something: a floor without caps stores what it always stored.
    ...(state.avatarMessages?.length ? { avatarMessages: [...state.avatarMessages] } : {}),
    ...(state.capNotices?.size ? { capNotices: [...state.capNotices] } : {}),
    budget: {
      ...(budget.anchorMessageId !== undefined ? { anchorMessageId: budget.anchorMessageId } : {}),
      main: budget.main,
      cascade: budget.cascade,
    },
  });
}

/**
 * The floor state of a validated snapshot, stepped by `setup`'s engine. Avatars no longer in the
 * roster are dropped with their turns; presences take the current configuration's settings, and
 * ids and channel ids come from the keys and the snapshot. The state shares no object with `data`
 * (a snapshot stays its caller's: the fast reader hands over the input itself).
 * Throws when a machine state names a state its machine does not have.
 */
export function restoreFloorState(data: FloorSnapshot, setup: FloorSetup): FloorState {
  const state = createFloorState(data.channelId, data.epoch, data.now);
  const known = (id: string) => setup.roster.has(id);
  state.turnSeq = data.turnSeq;
  state.threadSeq = data.threadSeq;
  for (const [id, stored] of data.presences) {
    if (!known(id)) continue;
    const { value, context } = restoredPresence(stored, id, data.channelId, setup.settings);
    state.presences.set(id, setup.engine.presence.restore(value, context));
  }
  for (const [id, stored] of data.threads) {
    const { value, context } = restoredThread(stored, id, data.channelId);
    state.threads.set(id, setup.engine.thread.restore(value, context));
  }
  for (const [id, outcome] of data.endedThreads) state.endedThreads.set(id, outcome);
  for (const stored of data.inFlight) {
    if (!known(stored.avatarId)) continue;
    const { turnId, ...rest } = stored;
    state.inFlight.set(turnId, {
      turnId,
      channelId: data.channelId,
      ...rest,
      context: contextCopy(rest.context),
    });
  }
  for (const [id, n] of data.threadReservations) state.threadReservations.set(id, n);
  for (const f of data.followUps) if (known(f.avatarId)) state.followUps.push({ ...f });
  for (const [id, d] of data.deferred)
    if (known(id)) state.deferred.set(id, { spec: specCopy(d.spec), messageId: d.messageId });
  for (const [id, spec] of data.pendingGreetings)
    if (known(id)) state.pendingGreetings.set(id, specCopy(spec));
  for (const [id, at] of data.departed) if (known(id)) state.departed.set(id, at);
  for (const [pair, b] of data.threadBackoff) state.threadBackoff.set(pair, { ...b });
  for (const [id, a] of data.arrivals)
    if (known(id)) state.arrivals.set(id, a.reactedBy ? { ...a, reactedBy: { ...a.reactedBy } } : { ...a });
  if (data.avatarMessages?.length) state.avatarMessages = [...data.avatarMessages];
  if (data.capNotices?.length)
    state.capNotices = new Map(data.capNotices.map(([key, until]) => [key, until]));
  state.budget = {
    anchorMessageId: data.budget.anchorMessageId,
    main: data.budget.main,
    cascade: data.budget.cascade,
  };
  return state;
}

function contextCopy(context: TurnContext): TurnContext {
  return {
    ...context,
    presentNames: [...context.presentNames],
    threadPartnerNames: [...context.threadPartnerNames],
  };
}

function specCopy(spec: ClaimSpec): ClaimSpec {
  return spec.addressedBy ? { ...spec, addressedBy: { ...spec.addressedBy } } : { ...spec };
}
