import { createUsageLedger } from '../actors/usage/storedUsageLedger.js';
import { addTotals, emptyTotals } from '../actors/usage/usageTotals.js';
import { openDefaultStore, type StoreOpeners } from '../adapters/store/storeFromEnv.js';
import { builtInModelPrices } from '../config/modelPrices.js';
import { terminalText } from '../delivery/terminalText.js';
import { createLogger } from '../logging/logger.js';
import { logLevelFromEnv } from '../logging/logLevel.js';
import type { TroupeStore } from '../ports/store.js';
import { isTroupeError } from '../ports/troupeError.js';
import type { UsageGrouping, UsageRow, UsageTotals } from '../ports/usage.js';
import { fail, readOrFail } from './fail.js';
import { exitCodeOf, reportStoreFailure } from './storeErrors.js';
import { type DailyUsageCaps, dailyUsageCapsFromEnv } from './usageCaps.js';
import { type CapUse, capLine, capUses, usageTable } from './usageText.js';

/** The groupings `--by` takes. */
export const USAGE_GROUPINGS = [
  'avatar',
  'channel',
  'purpose',
  'model',
] as const satisfies readonly UsageGrouping[];

const DAY_MS = 86_400_000;
const SINCE_UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: DAY_MS };

/**
 * `--since`: a span back from now (`90m`, `24h`, `7d`) or a time (`2026-11-27`,
 * `2026-11-27T09:00:00Z`); undefined when it is neither.
 */
export function sinceOf(raw: string, now: number): number | undefined {
  const span = /^\s*(\d+(?:\.\d+)?)\s*([mhd])\s*$/iu.exec(raw);
  if (span) return now - Number(span[1]) * (SINCE_UNITS[(span[2] ?? 'h').toLowerCase()] ?? 0);
  if (!/^\d{4}-\d{2}-\d{2}/u.test(raw.trim())) return undefined;
  const at = Date.parse(raw.trim());
  return Number.isFinite(at) ? at : undefined;
}

/** What `troupe usage` needs. */
export interface UsageCommandOptions {
  by: UsageGrouping;
  /** As typed after `--since` (default `24h`). */
  since: string;
  json: boolean;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** Default: the system clock. */
  now?: () => number;
  storeOpeners?: Partial<StoreOpeners>;
}

/** What `troupe usage --json` prints. */
export interface UsageJson {
  by: UsageGrouping;
  since: string;
  until: string;
  rows: UsageRow[];
  total: UsageTotals;
  /** The daily caps the environment sets. */
  limits: DailyUsageCaps;
  /** Each daily cap set, with what the current UTC day used of it (per avatar: each that spent today). */
  caps: CapUse[];
}

/**
 * `troupe usage [--by avatar|channel|purpose|model] [--since 24h] [--json]`: the model calls the
 * usage ledger holds in the store (every process sharing it), grouped, with tokens, characters
 * and estimated cost per group and in total, and each daily cap the environment sets with how much
 * of it today (UTC) used. Calls whose provider reported no usage are shown as such, never as zero.
 */
export async function runUsage(options: UsageCommandOptions): Promise<number> {
  const now = (options.now ?? Date.now)();
  const since = sinceOf(options.since, now);
  if (since === undefined)
    return fail(
      options.stderr,
      'TROUPE_CONFIG_INVALID',
      `--since ${JSON.stringify(options.since)} is not a span (90m, 24h, 7d) or a time (2026-11-27, 2026-11-27T09:00:00Z).`,
    );
  const caps = await readOrFail(options.stderr, () => dailyUsageCapsFromEnv(options.env));
  if (typeof caps === 'number') return caps;
  let store: TroupeStore;
  try {
    const logger = createLogger({ level: logLevelFromEnv(options.env, 'warn') });
    store = await openDefaultStore(options.env, {
      logger,
      ...(options.storeOpeners ? { openers: options.storeOpeners } : {}),
    });
  } catch (error) {
    if (!isTroupeError(error)) throw error;
    return fail(options.stderr, error.code, error.message, exitCodeOf(error));
  }
  try {
    const report = await readUsage(store, options.by, since, now, caps);
    if (options.json) options.stdout(`${JSON.stringify(report, null, 2)}\n`);
    else printUsage(report, options.stdout);
    return 0;
  } catch (error) {
    const code = reportStoreFailure(error, options.stderr);
    if (code !== undefined) return code;
    if (!isTroupeError(error)) throw error;
    return fail(options.stderr, error.code, error.message, exitCodeOf(error, 1));
  } finally {
    await store.close();
  }
}

async function readUsage(
  store: TroupeStore,
  by: UsageGrouping,
  since: number,
  now: number,
  caps: DailyUsageCaps,
): Promise<UsageJson> {
  // Reading only: costs were estimated when the calls were recorded.
  const ledger = createUsageLedger({ store: store.documents, prices: builtInModelPrices });
  const until = now + 1;
  const rows = await ledger.report({ by, since, until });
  const total = rows.reduce((sum, row) => addTotals(sum, row), emptyTotals());
  await ledger.load(now);
  const today = await ledger.report({ by: 'avatar', since: Math.floor(now / DAY_MS) * DAY_MS, until });
  const avatars = today
    .filter((row) => row.key !== 'email')
    .map((row) => ({ id: row.key, totals: ledger.dayTotals(now, row.key) }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return {
    by,
    since: new Date(Math.floor(since / 3_600_000) * 3_600_000).toISOString(),
    until: new Date(now).toISOString(),
    rows,
    total,
    limits: caps,
    caps: capUses(caps, { total: ledger.dayTotals(now), avatars }),
  };
}

function printUsage(report: UsageJson, stdout: (text: string) => void): void {
  const out = (line: string) => stdout(`${terminalText(line)}\n`);
  const from = report.since.slice(0, 16).replace('T', ' ');
  out(`Model calls since ${from} UTC, by ${report.by}:`);
  if (report.rows.length === 0) out('  none');
  else for (const line of usageTable(report.by, report.rows, report.total)) out(`  ${line}`);
  out('Costs are estimates from the price table when each call was made (TROUPE_MODEL_PRICES).');
  if (Object.keys(report.limits).length === 0) {
    out(
      'No daily caps set (TROUPE_AVATAR_MAX_TOKENS_PER_DAY, TROUPE_AVATAR_MAX_COST_PER_DAY_USD, TROUPE_MAX_TOKENS_PER_DAY, TROUPE_MAX_COST_PER_DAY_USD).',
    );
    return;
  }
  out(`Daily caps (UTC day ${report.until.slice(0, 10)}):`);
  const { avatarTokens, avatarCostUsd } = report.limits;
  if (
    (avatarTokens !== undefined || avatarCostUsd !== undefined) &&
    !report.caps.some((c) => c.scope === 'avatar')
  )
    out('  No avatar has used any of its daily caps today.');
  for (const cap of report.caps) out(`  ${capLine(cap)}`);
}
