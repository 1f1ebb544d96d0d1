import type { CoordinationConfig } from '../../config/coordinationConfig.js';

/** The daily caps on model usage, per avatar and in total (UTC days); unset ones are absent. */
export interface DailyUsageCaps {
  avatarTokens?: number;
  avatarCostUsd?: number;
  totalTokens?: number;
  totalCostUsd?: number;
}

/** One avatar's own daily caps, replacing the per-avatar ones for it; absent: no cap of that measure. */
export interface AvatarUsageCaps {
  tokens?: number;
  costUsd?: number;
}

/** The daily caps a coordination config sets (0: no cap, left out). */
export function dailyUsageCapsOf(config: CoordinationConfig): DailyUsageCaps {
  const caps: DailyUsageCaps = {};
  if (config.avatarMaxTokensPerDay > 0) caps.avatarTokens = config.avatarMaxTokensPerDay;
  if (config.avatarMaxCostPerDayUsd > 0) caps.avatarCostUsd = config.avatarMaxCostPerDayUsd;
  if (config.maxTokensPerDay > 0) caps.totalTokens = config.maxTokensPerDay;
  if (config.maxCostPerDayUsd > 0) caps.totalCostUsd = config.maxCostPerDayUsd;
  return caps;
}

/** Daily caps of one avatar as {@link dailyCapsOf} resolves them (0: none), in the report's terms. */
export function avatarUsageCapsOf(caps: {
  maxTokensPerDay: number;
  maxCostPerDayUsd: number;
}): AvatarUsageCaps {
  const out: AvatarUsageCaps = {};
  if (caps.maxTokensPerDay > 0) out.tokens = caps.maxTokensPerDay;
  if (caps.maxCostPerDayUsd > 0) out.costUsd = caps.maxCostPerDayUsd;
  return out;
}
