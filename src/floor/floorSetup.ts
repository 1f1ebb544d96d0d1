import type { CoordinationConfig } from '../config/coordinationConfig.js';
import type { PresenceSettings } from '../machines/avatarPresence.machine.js';
import { rungRanks } from '../machines/rungOrder.js';
import { createMentionMatcher, type MentionMatcher } from '../textRules/mentionMatcher.js';
import type { SpendGate } from './caps.js';
import { type FloorEngine, type FloorEngineName, floorEngine } from './floorEngine.js';
import type { Author, AvatarProfile, Rung } from './floorTypes.js';

/**
 * What a floor runs with that is not its state: configuration, roster and engine. It comes from
 * the runtime (on restore too), so it is never stored.
 */
export interface FloorSetup {
  readonly config: CoordinationConfig;
  /** The presence machine's knobs, shared by every presence of the floor. */
  readonly settings: PresenceSettings;
  readonly ranks: ReadonlyMap<Rung, number>;
  readonly engine: FloorEngine;
  roster: Map<string, AvatarProfile>;
  /** True while `roster` and `matcher` are shared with other floors (copy on write). */
  sharedRoster: boolean;
  matcher: MentionMatcher;
  /** The caps kept outside the channel (tokens and cost per day), if any. */
  readonly spendGate?: SpendGate | undefined;
}

/** A roster's lookup maps and mention matcher, built once per roster array. */
interface SharedRoster {
  roster: Map<string, AvatarProfile>;
  matcher: MentionMatcher;
}

const sharedRosters = new WeakMap<readonly AvatarProfile[], SharedRoster>();

function sharedRosterOf(profiles: readonly AvatarProfile[]): SharedRoster {
  let shared = sharedRosters.get(profiles);
  if (!shared) {
    const roster = new Map<string, AvatarProfile>();
    for (const avatar of profiles) roster.set(avatar.id, avatar);
    shared = {
      roster,
      matcher: createMentionMatcher([...roster.values()]),
    };
    sharedRosters.set(profiles, shared);
  }
  return shared;
}

/** The presence settings and rung ranks of a configuration, shared by the floors built with it. */
interface SharedConfig {
  settings: PresenceSettings;
  ranks: ReadonlyMap<Rung, number>;
}

const sharedConfigs = new WeakMap<CoordinationConfig, SharedConfig>();

function sharedConfigOf(config: CoordinationConfig): SharedConfig {
  let shared = sharedConfigs.get(config);
  if (!shared) {
    shared = {
      settings: {
        perAvatarCooldownMs: config.perAvatarCooldownMs,
        recentSummonCooldownMs: config.recentSummonCooldownMs,
        stickyAffinityTtlMs: config.stickyAffinityTtlMs,
        attentionHalfLifeMs: config.attentionHalfLifeMs,
        summonConversationDurationMs: config.summonConversationDurationMs,
      },
      ranks: rungRanks(config.threadResponsePriority),
    };
    sharedConfigs.set(config, shared);
  }
  return shared;
}

/** The setup for a floor with this configuration, roster (treated as immutable) and engine. */
export function createFloorSetup(
  config: CoordinationConfig,
  roster: readonly AvatarProfile[],
  engine: FloorEngineName = 'compiled',
  spendGate?: SpendGate,
): FloorSetup {
  // Floors built from the same roster array share its maps and mention matcher: a runtime with
  // thousands of channels builds them once, not per channel (restores and heap both gain).
  // Likewise the presence settings and ranks of one configuration (configurations are not mutated).
  const shared = sharedRosterOf(roster);
  const { settings, ranks } = sharedConfigOf(config);
  return {
    config,
    settings,
    ranks,
    engine: floorEngine(engine),
    roster: shared.roster,
    sharedRoster: true,
    matcher: shared.matcher,
    spendGate,
  };
}

/** Adds (or replaces) an avatar in this floor's roster, unsharing the roster first. */
export function addToRoster(setup: FloorSetup, avatar: AvatarProfile): void {
  if (setup.sharedRoster) {
    setup.roster = new Map(setup.roster);
    setup.sharedRoster = false;
  }
  setup.roster.set(avatar.id, avatar);
  setup.matcher = createMentionMatcher([...setup.roster.values()]);
}

/** Gives the floor another roster (the runtime's cast changed), shared with the floors built from it. */
export function useSharedRoster(setup: FloorSetup, roster: readonly AvatarProfile[]): void {
  const shared = sharedRosterOf(roster);
  setup.roster = shared.roster;
  setup.matcher = shared.matcher;
  setup.sharedRoster = true;
}

/** An avatar's display name, or its id when the roster does not know it. */
export function nameOf(setup: FloorSetup, avatarId: string): string {
  return setup.roster.get(avatarId)?.name ?? avatarId;
}

/** The name of whoever wrote a message. */
export function authorName(setup: FloorSetup, author: Author): string {
  return author.kind === 'human' ? author.name : nameOf(setup, author.id);
}
