import { coordinationFromEnv } from '../config/coordinationFromEnv.js';
import type { EnvRecord } from '../config/settings.js';

/** The daily caps on model usage, per avatar and in total (UTC days); unset ones are absent. */
export interface DailyUsageCaps {
  avatarTokens?: number;
  avatarCostUsd?: number;
  totalTokens?: number;
  totalCostUsd?: number;
}

/**
 * The daily token and cost caps the environment sets (`TROUPE_AVATAR_MAX_TOKENS_PER_DAY`,
 * `TROUPE_AVATAR_MAX_COST_PER_DAY_USD`, `TROUPE_MAX_TOKENS_PER_DAY`, `TROUPE_MAX_COST_PER_DAY_USD`),
 * read with the coordination settings' own rules, as `troupe usage` shows them. 0 or unset: no cap.
 * @throws ConfigError naming every coordination variable that is invalid.
 */
export function dailyUsageCapsFromEnv(env: EnvRecord): DailyUsageCaps {
  const config = coordinationFromEnv(env);
  const caps: DailyUsageCaps = {};
  if (config.avatarMaxTokensPerDay > 0) caps.avatarTokens = config.avatarMaxTokensPerDay;
  if (config.avatarMaxCostPerDayUsd > 0) caps.avatarCostUsd = config.avatarMaxCostPerDayUsd;
  if (config.maxTokensPerDay > 0) caps.totalTokens = config.maxTokensPerDay;
  if (config.maxCostPerDayUsd > 0) caps.totalCostUsd = config.maxCostPerDayUsd;
  return caps;
}
