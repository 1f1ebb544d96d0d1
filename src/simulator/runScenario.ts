import { type CoordinationConfig, defaultCoordinationConfig } from '../config/coordinationConfig.js';
import type { ChannelFloor, ChannelFloorOptions, FloorView } from '../floor/channelFloor.js';
import type { DrivenFloor } from '../floor/floorDriver.js';
import type {
  BudgetLane,
  CapReason,
  FloorEvent,
  Rung,
  SuppressionReason,
  ThreadMode,
  ThreadOutcome,
  TurnKind,
} from '../floor/floorTypes.js';
import { type Scenario, type ScenarioFailure, scenarioConfigOverrides } from './scenario.js';
import { ScenarioRun } from './scenarioRun.js';
import type { SimulationSummary } from './summary.js';

/** The part of a channel floor the simulator drives (a real {@link ChannelFloor} by default). */
export interface FloorLike extends DrivenFloor {
  view(): Pick<FloorView, 'inFlight'>;
}

/** How {@link runScenario} runs. */
export interface RunScenarioOptions {
  /** Base coordination config; the scenario's `config` overrides are laid over it. Default: the defaults. */
  config?: CoordinationConfig;
  /** Epoch ms of simulated time zero. Default 2025-11-13T12:00:00Z. */
  startAt?: number;
  /** Hard cap on processed events, so a run always ends. Default 20 000. */
  maxEvents?: number;
  /** Hard cap on simulated time past the end of the script. Default 24h. */
  maxOvertimeMs?: number;
  /** Builds the floor; for tests of the driver itself. */
  createFloor?: (options: ChannelFloorOptions) => FloorLike;
}

interface EntryBase {
  /** Simulated milliseconds since the start. */
  t: number;
}

/** A person's message. */
export interface HumanMessageEntry extends EntryBase {
  type: 'human';
  messageId: string;
  authorId: string;
  name: string;
  text: string;
  mentions?: string[];
  replyTo?: { messageId: string; avatarId?: string };
}

/** An avatar's message: a delivered turn (`source: 'offline'`) or a scripted line (`'script'`). */
export interface AvatarMessageEntry extends EntryBase {
  type: 'avatar';
  messageId: string;
  avatarId: string;
  name: string;
  emoji?: string;
  text: string;
  mentions?: string[];
  replyTo?: { messageId: string; avatarId?: string };
  source: 'offline' | 'script';
  /** Guaranteed (summon) turns the avatar holds after this message, when it spent one. */
  summonTurnsLeft?: number;
  /** For delivered turns: the claim that allowed the message. */
  turnId?: string;
  kind?: TurnKind;
  rung?: Rung;
  reason?: string;
  lane?: BudgetLane;
  threadId?: string;
  anchorMessageId?: string;
  triggerMessageId?: string;
  /** Who the turn answered (an avatar or human id). */
  addressedById?: string;
  farewell?: boolean;
  /**
   * For delivered turns: how many messages the avatar's prompt would have held (what it witnessed
   * in the history window, by the same rule as the runtime's prompts).
   */
  seen?: number;
}

/** Every kind of transcript line. Suppressed candidates and claims print only with `verbose`. */
export type TranscriptEntry =
  | HumanMessageEntry
  | AvatarMessageEntry
  | (EntryBase & {
      type: 'summon';
      avatarId: string;
      name: string;
      byId?: string;
      byName?: string;
      messageId?: string;
      turnsGranted: number;
    })
  | (EntryBase & { type: 'dismiss'; avatarId: string; name: string })
  | (EntryBase & { type: 'join'; avatarId: string; name: string })
  | (EntryBase & {
      type: 'thread.opened';
      threadId: string;
      mode: ThreadMode;
      participants: string[];
      maxTurns: number;
      /** Simulated ms since the start. */
      expiresAt: number;
    })
  | (EntryBase & {
      type: 'thread.ended';
      threadId: string;
      outcome: ThreadOutcome;
      detail: string;
      turns: number;
      /** Mean sentiment per turn, when any turn was scored. */
      sentiment?: number;
    })
  | (EntryBase & {
      type: 'claim';
      turnId: string;
      avatarId: string;
      kind: TurnKind;
      rung: Rung;
      reason: string;
      lane: BudgetLane;
      threadId?: string;
      anchorMessageId: string;
      triggerMessageId?: string;
    })
  | (EntryBase & {
      type: 'suppressed';
      avatarId: string;
      messageId: string;
      rung?: Rung;
      reason: SuppressionReason;
      /** The reason in words (a score against its threshold), where there is one. */
      detail?: string;
    })
  | (EntryBase & {
      type: 'turn.failed';
      turnId: string;
      avatarId: string;
      stage: ScenarioFailure['stage'];
      reason: string;
    })
  | (EntryBase & { type: 'turn.released'; turnId: string; avatarId: string; reason: string })
  | (EntryBase & { type: 'rejected'; event: FloorEvent['type']; code: string; message: string })
  | (EntryBase & {
      /** A person addressed an avatar that reached a cap, and was told so. */
      type: 'cap.notice';
      avatarId: string;
      /** The person told. */
      to: string;
      reason: CapReason;
      text: string;
      /** Simulated ms since the start when the cap lets the avatar speak again. */
      resetsAt: number;
    })
  | (EntryBase & { type: 'note'; message: string })
  | (EntryBase & { type: 'narration'; text: string });

/** The model an avatar names, and the one that plays its turns in the simulation. */
export interface SimulatedAvatarModel {
  /** The avatar's id. */
  avatarId: string;
  /** Its display name. */
  name: string;
  /** Its `model:` (`provider:model`, `offline` or a profile name); absent: the default model. */
  named?: string;
  /** What writes its turns here: always the offline scripted model (no provider is called). */
  played: 'offline:scripted';
}

/** The outcome of a simulation: every transcript line, the summary, and the config used. */
export interface SimulationResult {
  scenario: Scenario;
  config: CoordinationConfig;
  /** Each avatar's model: the one it names, and the offline model that played it. */
  models: SimulatedAvatarModel[];
  /** Epoch ms of simulated time zero. */
  startAt: number;
  transcript: TranscriptEntry[];
  summary: SimulationSummary;
}

/** 2025-11-13T12:00:00Z: the default start of simulated time. */
export const DEFAULT_START_AT = Date.UTC(2025, 10, 13, 12, 0, 0);

/**
 * Runs a scenario against one {@link ChannelFloor} in simulated time. Script steps become floor
 * events at their times; each claimed turn is answered by the offline scripted model after
 * `generationLatency` (`turn.generated`, then `turn.delivered` with the reply, or `turn.failed` for
 * a scripted failure); a `tick` is sent at every `nextDeadline()`. After the script, it runs until
 * no turn is in flight and no deadline is pending, or a hard cap is hit. Nothing sleeps, nothing is
 * random: the same scenario gives the same result.
 */
export function runScenario(scenario: Scenario, options: RunScenarioOptions = {}): SimulationResult {
  const config: CoordinationConfig = {
    ...(options.config ?? defaultCoordinationConfig),
    ...scenarioConfigOverrides(scenario),
  };
  return new ScenarioRun(scenario, {
    config,
    start: options.startAt ?? DEFAULT_START_AT,
    maxEvents: options.maxEvents ?? 20_000,
    maxOvertimeMs: options.maxOvertimeMs ?? 24 * 3_600_000,
    ...(options.createFloor ? { createFloor: options.createFloor } : {}),
  }).run();
}
