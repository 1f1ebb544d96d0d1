import { Subject } from 'rxjs';
import { compose } from '../composer/compose.js';
import type { CoordinationConfig } from '../config/coordinationConfig.js';
import { builtInModelPrices } from '../config/modelPrices.js';
import { zodIssues } from '../config/zodIssues.js';
import type { SpendGate } from '../floor/caps.js';
import { createLogger, type Logger } from '../logging/logger.js';
import type { Clock } from '../ports/clock.js';
import type { TurnModel } from '../ports/model.js';
import type { TroupeStore } from '../ports/store.js';
import { describe, TroupeError } from '../ports/troupeError.js';
import { ActorRegistry } from './actorRegistry.js';
import { AvatarCast } from './avatarCast.js';
import { AvatarCreator } from './avatarCreator.js';
import { avatarListSchema } from './avatarDefinition.js';
import { resolveAvatarModels } from './avatarModels.js';
import type { ChannelActor } from './channelActor.js';
import { channelFromKey } from './channelKey.js';
import { systemClock } from './clock.js';
import type { InspectionEvent } from './inspectionEvent.js';
import { RelationshipTracker } from './relationshipTracker.js';
import { RoutingActor } from './routingActor.js';
import type { ResolvedRuntimeOptions } from './runtimeOptions.js';
import { LookupDesk } from './tools/lookupDesk.js';
import { TurnExecutor } from './turnExecutor.js';
import { UnfoldedHistory } from './unfoldedHistory.js';
import { meteredObjectModel } from './usage/meteredEmailModels.js';
import { meteredTurnModel } from './usage/meteredTurnModel.js';
import { hasDailyCaps, ledgerSpendGate } from './usage/spendGate.js';
import { createUsageLedger, USAGE_RETENTION_IN_MEMORY_MS } from './usage/storedUsageLedger.js';
import type { UsageLedger } from './usage/usageLedger.js';
import { WitnessLog } from './witnessLog.js';
import { type ExternalWait, WorkTracker } from './workTracker.js';

/**
 * The parts of a running runtime that its channel lifecycle, front door and shutdown share: the
 * cast, the ports, the registry of channel actors, the streams, and whether it is stopping.
 */
export interface RuntimeWiring {
  readonly options: ResolvedRuntimeOptions;
  /** The avatars as they are now (given, then created by summoning). */
  readonly cast: AvatarCast;
  /** Creates, loads and forgets the avatars summoning creates. */
  readonly creator: AvatarCreator;
  readonly config: CoordinationConfig;
  readonly model: TurnModel;
  /** Avatars' own models (`model:`), as configured (the executor calls them through the usage meter). */
  readonly avatarModels: ReadonlyMap<string, TurnModel>;
  readonly store: TroupeStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** True when the store outlives the process: writes go behind, and channels are leased. */
  readonly durable: boolean;
  readonly tracker: WorkTracker;
  readonly registry: ActorRegistry<ChannelActor>;
  readonly inspection$: Subject<InspectionEvent>;
  readonly errors$: Subject<TroupeError>;
  readonly inspect: (event: InspectionEvent) => void;
  /** True when anyone observes inspection events (they are not built otherwise). */
  readonly inspecting: () => boolean;
  readonly routing: RoutingActor;
  readonly relationships: RelationshipTracker;
  readonly executor: TurnExecutor;
  /** History lines riding the channels' ledgers (a durable store that keeps writes in order). */
  readonly unfolded: UnfoldedHistory | undefined;
  /** Every model call's usage (undefined with `usage: false`). */
  readonly usage: UsageLedger | undefined;
  /** The daily token and cost caps over `usage`, when any is set. */
  readonly spendGate: SpendGate | undefined;
  /** Settles once the day's stored usage and the created avatars are read: channels decide nothing before. */
  readonly loadedAtStart: Promise<void>;
  /** Set once `stop()` is called: no event is accepted and no channel activated after that. */
  stopping: Promise<void> | undefined;
}

/**
 * Validates the avatars and builds the runtime's shared parts (routing, relationships, the turn
 * executor and its lookup desk, the work tracker, the streams) from resolved options.
 *
 * @throws TroupeError `TROUPE_AVATARS_INVALID` when the avatar list does not validate, and
 *   `TROUPE_AVATAR_MODEL_INVALID` when an avatar's `model:` cannot be built.
 */
export function wireRuntime(options: ResolvedRuntimeOptions): RuntimeWiring {
  const parsedAvatars = avatarListSchema.safeParse(options.avatars);
  if (!parsedAvatars.success) {
    throw new TroupeError(
      'TROUPE_AVATARS_INVALID',
      `The avatar definitions are invalid: ${zodIssues(parsedAvatars.error, 'avatars', { prefix: 'avatars.' })}`,
    );
  }
  const avatars = parsedAvatars.data;
  const cast = new AvatarCast(avatars);
  const { config, model, store } = options;
  const avatarModels = resolveAvatarModels(avatars, model, options.models);
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger();
  const durable = options.persistence?.durable ?? store.kind !== 'memory';
  const usage = usageLedgerOf(options, clock, logger, durable);
  // One meter per model object: avatars sharing a model share its meter (and its identity).
  const meters = new Map<TurnModel, TurnModel>();
  const metered = (m: TurnModel): TurnModel => {
    if (!usage) return m;
    let meter = meters.get(m);
    if (!meter) {
      meter = meteredTurnModel(m, usage, clock);
      meters.set(m, meter);
    }
    return meter;
  };
  const inspection$ = new Subject<InspectionEvent>();
  const relationships = new RelationshipTracker({
    documents: store.documents,
    clock,
    logger: logger.child({ actor: 'relationships' }),
    writeBehind: durable,
  });
  // Lines ride the ledger only where a fold's lines and snapshot are one commit.
  const unfolded = durable && store.outbox.writesInOrder ? new UnfoldedHistory() : undefined;
  const executor = new TurnExecutor({
    unfolded,
    ...lookupDeskOf(options, logger),
    toolUsers: new Set(avatars.filter((a) => a.tools.includes('entity_lookup')).map((a) => a.id)),
    model: metered(model),
    avatarModels: new Map([...avatarModels].map(([id, m]) => [id, metered(m)])),
    history: store.history,
    relationships,
    witness: new WitnessLog({
      documents: store.documents,
      clock,
      logger: logger.child({ actor: 'witness' }),
      backfill: config.witnessBackfill,
    }),
    avatars: cast.profilesById,
    ...(options.historyLimit !== undefined ? { historyLimit: options.historyLimit } : {}),
  });
  if (model.offline) {
    logger.info(
      { model: model.id },
      'no language model configured: avatars answer with the offline scripted model (set TROUPE_MODEL_PROVIDER or OPENAI_API_KEY to use a real one)',
    );
  } else {
    logger.info({ model: model.id }, 'language model configured');
  }
  for (const [avatar, own] of avatarModels) logger.info({ avatar, model: own.id }, 'avatar model configured');
  const creator = new AvatarCreator({
    cast,
    documents: store.documents,
    clock,
    logger: logger.child({ actor: 'avatars' }),
    options: options.avatarCreation ?? {},
    ...(usage
      ? {
          meter: (m, avatarId, scope) =>
            meteredObjectModel(
              m,
              { ledger: usage, clock, scope, spender: { kind: 'avatar', id: avatarId } },
              'avatar-creation',
            ),
        }
      : {}),
  });
  return {
    options,
    cast,
    creator,
    config,
    model,
    avatarModels,
    store,
    clock,
    logger,
    durable,
    tracker: new WorkTracker(externalWaits(options, [model, ...avatarModels.values()])),
    registry: new ActorRegistry<ChannelActor>(),
    inspection$,
    errors$: new Subject<TroupeError>(),
    inspect: (event) => inspection$.next(event),
    inspecting: () => inspection$.observed,
    routing: routingOf(options, clock, logger),
    relationships,
    executor,
    unfolded,
    usage,
    spendGate: usage && hasDailyCaps(config, avatars) ? ledgerSpendGate(usage, config, cast.byId) : undefined,
    loadedAtStart: Promise.all([
      usage ? loadUsage(usage, clock, logger) : undefined,
      loadCreatedAvatars(creator, logger),
    ]).then(() => undefined),
    stopping: undefined,
  };
}

/**
 * The runtime's usage ledger: the one given, none with `false`, else one on its store. On a store
 * that does not outlive the process, buckets are kept the days the ledger totals in memory (today
 * and two before) rather than a month of reports: a memory store's heap would otherwise grow by
 * a bucket per hour, avatar and channel with calls.
 */
function usageLedgerOf(
  options: ResolvedRuntimeOptions,
  clock: Clock,
  logger: Logger,
  durable: boolean,
): UsageLedger | undefined {
  if (options.usage === false) return undefined;
  return (
    options.usage ??
    createUsageLedger({
      store: options.store.documents,
      prices: builtInModelPrices,
      clock,
      logger: logger.child({ actor: 'usage' }),
      ...(durable ? {} : { retentionMs: USAGE_RETENTION_IN_MEMORY_MS }),
    })
  );
}

/** Reads today's stored usage; a store that fails is logged and the day starts from what is recorded. */
async function loadUsage(usage: UsageLedger, clock: Clock, logger: Logger): Promise<void> {
  try {
    await usage.load(clock.now());
  } catch (error) {
    logger.warn({ err: error }, `today's stored usage could not be read: ${describe(error)}`);
  }
}

/** Reads the avatars created by summoning; a store that fails is logged and the given cast starts alone. */
async function loadCreatedAvatars(creator: AvatarCreator, logger: Logger): Promise<void> {
  try {
    await creator.load();
  } catch (error) {
    logger.warn({ err: error }, `the created avatars could not be read: ${describe(error)}`);
  }
}

function routingOf(options: ResolvedRuntimeOptions, clock: Clock, logger: Logger): RoutingActor {
  return new RoutingActor({
    transports: options.transports ?? [],
    outbox: options.store.outbox,
    clock,
    logger: logger.child({ actor: 'routing' }),
    ...(options.speech ? { speech: options.speech } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.sendTimeoutMs !== undefined ? { sendTimeoutMs: options.sendTimeoutMs } : {}),
  });
}

/** The turn executor's lookup desk, when the runtime has a lookup tool. */
function lookupDeskOf(options: ResolvedRuntimeOptions, logger: Logger): { lookupDesk?: LookupDesk } {
  const lookup = options.lookup;
  if (!lookup) return {};
  return {
    lookupDesk: new LookupDesk({
      tool: lookup.tool,
      compose,
      ...(lookup.composer ? { composer: lookup.composer } : {}),
      ...(lookup.choiceTtlMs !== undefined ? { choiceTtlMs: lookup.choiceTtlMs } : {}),
      events: options.store.events,
      logger: logger.child({ actor: 'lookup' }),
    }),
  };
}

/**
 * Which waits leave the process, from the ports in use: the runtime knows its own (the offline
 * model; memory and SQLite stores); any other port counts as external unless it says it is `local`.
 */
function externalWaits(options: ResolvedRuntimeOptions, models: readonly TurnModel[]): ExternalWait {
  const { store } = options;
  const modelLocal = models.every((model) => model.local ?? model.offline);
  const storeLocal = store.local ?? (store.kind === 'memory' || store.kind === 'sqlite');
  const localKinds = new Set((options.transports ?? []).filter((t) => t.local === true).map((t) => t.kind));
  const allTransportsLocal = (options.transports ?? []).every((t) => t.local === true);
  const speechLocal = options.speech === undefined || options.speech.local === true;
  const lookupLocal = options.lookup?.tool.local === true;
  return (wait, channel) => {
    switch (wait) {
      case 'model':
        return !modelLocal;
      case 'store':
        return !storeLocal;
      case 'lookup':
        return !lookupLocal;
      case 'speech':
        return !speechLocal;
      case 'transport':
        // A delivery records in the outbox, may speak, and sends.
        return (
          !storeLocal ||
          !speechLocal ||
          channel === undefined ||
          !localKinds.has(channelFromKey(channel).kind)
        );
      case 'recovery':
        return !storeLocal || !speechLocal || !allTransportsLocal;
      case 'queue':
        // Waits for another unit of work, which is counted (and named) itself.
        return false;
    }
  };
}
