import type { CoordinationConfig } from '../../config/coordinationConfig.js';
import type { CapBlock, SpendGate } from '../../floor/caps.js';
import type { UsageTotals } from '../../ports/usage.js';
import type { AvatarDefinition } from '../avatarDefinition.js';
import type { UsageLedger } from './usageLedger.js';

const DAY_MS = 86_400_000;

/** An avatar's daily caps (0: none), after its own `caps:` override the runtime-wide ones. */
export interface DailyCaps {
  maxTokensPerDay: number;
  maxCostPerDayUsd: number;
}

/** The caps of one avatar: its own where it sets them, else `TROUPE_AVATAR_MAX_*`. */
export function dailyCapsOf(config: CoordinationConfig, avatar: AvatarDefinition | undefined): DailyCaps {
  return {
    maxTokensPerDay: avatar?.caps?.maxTokensPerDay ?? config.avatarMaxTokensPerDay,
    maxCostPerDayUsd: avatar?.caps?.maxCostPerDayUsd ?? config.avatarMaxCostPerDayUsd,
  };
}

/** True when any daily cap is set (for everyone, or for one avatar). */
export function hasDailyCaps(config: CoordinationConfig, avatars: readonly AvatarDefinition[]): boolean {
  return (
    config.maxTokensPerDay > 0 ||
    config.maxCostPerDayUsd > 0 ||
    config.avatarMaxTokensPerDay > 0 ||
    config.avatarMaxCostPerDayUsd > 0 ||
    avatars.some((a) => (a.caps?.maxTokensPerDay ?? 0) > 0 || (a.caps?.maxCostPerDayUsd ?? 0) > 0)
  );
}

const tokensOf = (t: UsageTotals) => t.inputTokens + t.outputTokens;
const nextUtcDay = (at: number) => (Math.floor(at / DAY_MS) + 1) * DAY_MS;
const int = (n: number) => Math.round(n).toLocaleString('en-US');
const usd = (n: number) => `$${n.toFixed(n < 1 ? 4 : 2)}`;

/**
 * The floors' spend gate over the usage ledger: an avatar takes no turn once its tokens or cost of
 * the UTC day reach its cap, or everyone's reach the total cap. Checked before each turn, so the
 * calls already running when a cap is reached still finish (and are counted).
 */
export function ledgerSpendGate(
  ledger: UsageLedger,
  config: CoordinationConfig,
  avatars: ReadonlyMap<string, AvatarDefinition>,
): SpendGate {
  const capsById = new Map<string, DailyCaps>();
  for (const [id, avatar] of avatars) capsById.set(id, dailyCapsOf(config, avatar));
  return (avatarId, at): CapBlock | null => {
    const resetsAt = nextUtcDay(at);
    if (config.maxTokensPerDay > 0 || config.maxCostPerDayUsd > 0) {
      const all = ledger.dayTotals(at);
      if (config.maxTokensPerDay > 0 && tokensOf(all) >= config.maxTokensPerDay)
        return {
          reason: 'cap-total-tokens',
          detail: `${int(tokensOf(all))} of ${int(config.maxTokensPerDay)} tokens today, all together`,
          resetsAt,
        };
      if (config.maxCostPerDayUsd > 0 && all.costUsd >= config.maxCostPerDayUsd)
        return {
          reason: 'cap-total-cost',
          detail: `${usd(all.costUsd)} of ${usd(config.maxCostPerDayUsd)} today, all together`,
          resetsAt,
        };
    }
    const caps = capsById.get(avatarId) ?? dailyCapsOf(config, undefined);
    if (caps.maxTokensPerDay <= 0 && caps.maxCostPerDayUsd <= 0) return null;
    const own = ledger.dayTotals(at, avatarId);
    if (caps.maxTokensPerDay > 0 && tokensOf(own) >= caps.maxTokensPerDay)
      return {
        reason: 'cap-avatar-tokens',
        detail: `${int(tokensOf(own))} of ${int(caps.maxTokensPerDay)} tokens today`,
        resetsAt,
      };
    if (caps.maxCostPerDayUsd > 0 && own.costUsd >= caps.maxCostPerDayUsd)
      return {
        reason: 'cap-avatar-cost',
        detail: `${usd(own.costUsd)} of ${usd(caps.maxCostPerDayUsd)} today`,
        resetsAt,
      };
    return null;
  };
}
