import { z } from 'zod';
import { ConfigError, type ConfigProblem } from '../config/configError.js';
import type { EnvRecord } from '../config/settings.js';

/** The daily caps on model usage, per avatar and in total (UTC days); unset ones are absent. */
export interface DailyUsageCaps {
  avatarTokens?: number;
  avatarCostUsd?: number;
  totalTokens?: number;
  totalCostUsd?: number;
}

const EXPECTED = 'a number above 0';
const positive = z
  .string()
  .trim()
  .regex(/^\d*\.?\d+$/u, EXPECTED)
  .transform(Number)
  .pipe(z.number().finite(EXPECTED).positive(EXPECTED));

const variables = {
  TROUPE_AVATAR_MAX_TOKENS_PER_DAY: 'avatarTokens',
  TROUPE_AVATAR_MAX_COST_PER_DAY_USD: 'avatarCostUsd',
  TROUPE_MAX_TOKENS_PER_DAY: 'totalTokens',
  TROUPE_MAX_COST_PER_DAY_USD: 'totalCostUsd',
} as const satisfies Record<string, keyof DailyUsageCaps>;

/**
 * The daily token and cost caps the environment sets (`TROUPE_AVATAR_MAX_TOKENS_PER_DAY`,
 * `TROUPE_AVATAR_MAX_COST_PER_DAY_USD`, `TROUPE_MAX_TOKENS_PER_DAY`, `TROUPE_MAX_COST_PER_DAY_USD`),
 * as `troupe usage` shows them. Blank or unset: no cap.
 * @throws ConfigError naming every variable that is not a number above 0.
 */
export function dailyUsageCapsFromEnv(env: EnvRecord): DailyUsageCaps {
  const caps: DailyUsageCaps = {};
  const problems: ConfigProblem[] = [];
  for (const [variable, key] of Object.entries(variables)) {
    const raw = env[variable];
    if (raw === undefined || raw.trim() === '') continue;
    const parsed = positive.safeParse(raw);
    if (parsed.success) caps[key] = parsed.data;
    else problems.push({ variable, value: raw, expected: EXPECTED });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return caps;
}
