import type { AvatarDefinition } from '../actors/avatarDefinition.js';
import type { DailyUsageCaps } from '../actors/usage/dailyUsageCaps.js';
import { avatarUsageCapsOf, dailyUsageCapsOf } from '../actors/usage/dailyUsageCaps.js';
import { dailyCapsOf } from '../actors/usage/spendGate.js';
import { createUsageLedger } from '../actors/usage/storedUsageLedger.js';
import type { UsageLedger } from '../actors/usage/usageLedger.js';
import { type AvatarDay, type CapUse, capLine, capUses, usageTable } from '../actors/usage/usageText.js';
import { addTotals, emptyTotals } from '../actors/usage/usageTotals.js';
import { openDefaultStore, type StoreOpeners } from '../adapters/store/storeFromEnv.js';
import type { CoordinationConfig } from '../config/coordinationConfig.js';
import { coordinationFromEnv } from '../config/coordinationFromEnv.js';
import { builtInModelPrices } from '../config/modelPrices.js';
import { terminalText } from '../delivery/terminalText.js';
import { createLogger } from '../logging/logger.js';
import { logLevelFromEnv } from '../logging/logLevel.js';
import type { TroupeStore } from '../ports/store.js';
import { isTroupeError } from '../ports/troupeError.js';
import type { UsageGrouping, UsageRow, UsageTotals } from '../ports/usage.js';
import { loadAvatarsFile } from './avatarsFile.js';
import { fail, readOrFail } from './fail.js';
import { exitCodeOf, reportStoreFailure } from './storeErrors.js';

/** The groupings `--by` takes. */
export const USAGE_GROUPINGS = [
  'avatar',
  'channel',
  'purpose',
  'model',
] as const satisfies readonly UsageGrouping[];

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
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
  /** An avatars file: its avatars' own `caps:` replace the per-avatar caps for them. */
  avatarsFile?: string | undefined;
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
  /**
   * Each daily cap set, with what the current UTC day used of it: per avatar, each that spent today
   * and each of the avatars file with a cap (its own `caps:` where it sets them).
   */
  caps: CapUse[];
  /** With `TROUPE_CHANNEL_MAX_AVATAR_MESSAGES_PER_HOUR` set: what the ledger knows of each channel's hour. */
  channelHour?: ChannelHourUse;
}

/**
 * The channel-hour cap and, per channel, the avatars' model calls (turns, greetings, follow-ups)
 * in the ledger's hourly buckets from `since` (the start of the previous UTC hour) to now. The
 * last 60 minutes lie within them; the floor counts delivered avatar messages in a rolling hour,
 * and a call that wrote no message (a pass) is not one.
 */
export interface ChannelHourUse {
  limit: number;
  since: string;
  channels: { channel: string; calls: number }[];
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
  const config = await readOrFail(options.stderr, () => coordinationFromEnv(options.env));
  if (typeof config === 'number') return config;
  const avatarsFile = options.avatarsFile;
  const avatars = avatarsFile ? await readOrFail(options.stderr, () => loadAvatarsFile(avatarsFile)) : [];
  if (typeof avatars === 'number') return avatars;
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
    const report = await readUsage(store, { by: options.by, since, now, config, avatars });
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

interface UsageQuery {
  by: UsageGrouping;
  since: number;
  now: number;
  config: CoordinationConfig;
  /** The avatars file's avatars (none without one). */
  avatars: readonly AvatarDefinition[];
}

async function readUsage(store: TroupeStore, query: UsageQuery): Promise<UsageJson> {
  const { by, since, now, config } = query;
  const caps = dailyUsageCapsOf(config);
  // Reading only: costs were estimated when the calls were recorded.
  const ledger = createUsageLedger({ store: store.documents, prices: builtInModelPrices });
  const until = now + 1;
  const rows = await ledger.report({ by, since, until });
  const total = rows.reduce((sum, row) => addTotals(sum, row), emptyTotals());
  await ledger.load(now);
  const today = await ledger.report({ by: 'avatar', since: Math.floor(now / DAY_MS) * DAY_MS, until });
  const ids = new Set(today.filter((row) => row.key !== 'email').map((row) => row.key));
  const own = new Map(query.avatars.map((a) => [a.id, avatarUsageCapsOf(dailyCapsOf(config, a))]));
  for (const [id, limits] of own)
    if (limits.tokens !== undefined || limits.costUsd !== undefined) ids.add(id);
  const avatars: AvatarDay[] = [...ids]
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((id) => ({ id, totals: ledger.dayTotals(now, id), caps: own.get(id) }));
  const channelHour =
    config.channelMaxAvatarMessagesPerHour > 0
      ? await channelHourOf(ledger, config.channelMaxAvatarMessagesPerHour, now)
      : undefined;
  return {
    by,
    since: new Date(Math.floor(since / HOUR_MS) * HOUR_MS).toISOString(),
    until: new Date(now).toISOString(),
    rows,
    total,
    limits: caps,
    caps: capUses(caps, { total: ledger.dayTotals(now), avatars }),
    ...(channelHour ? { channelHour } : {}),
  };
}

async function channelHourOf(ledger: UsageLedger, limit: number, now: number): Promise<ChannelHourUse> {
  const since = (Math.floor(now / HOUR_MS) - 1) * HOUR_MS;
  const rows = await ledger.report({
    by: 'channel',
    since,
    until: now + 1,
    purposes: ['turn', 'greeting', 'follow-up'],
  });
  return {
    limit,
    since: new Date(since).toISOString(),
    channels: rows.map((row) => ({ channel: row.key, calls: row.calls })),
  };
}

function printUsage(report: UsageJson, stdout: (text: string) => void): void {
  const out = (line: string) => stdout(`${terminalText(line)}\n`);
  const from = report.since.slice(0, 16).replace('T', ' ');
  out(`Model calls since ${from} UTC, by ${report.by}:`);
  if (report.rows.length === 0) out('  none');
  else for (const line of usageTable(report.by, report.rows, report.total)) out(`  ${line}`);
  out('Costs are estimates from the price table when each call was made (TROUPE_MODEL_PRICES).');
  printDailyCaps(report, out);
  if (report.channelHour) printChannelHour(report.channelHour, out);
}

function printDailyCaps(report: UsageJson, out: (line: string) => void): void {
  if (Object.keys(report.limits).length === 0 && report.caps.length === 0) {
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

function printChannelHour(hour: ChannelHourUse, out: (line: string) => void): void {
  const from = hour.since.slice(11, 16);
  out(`Channel cap: ${hour.limit} avatar messages per channel per rolling hour.`);
  out(
    `  The ledger counts per UTC hour; avatars' model calls (turns, greetings, follow-ups) per channel since ${from} UTC, which covers the last 60 minutes:`,
  );
  if (hour.channels.length === 0) out('  none');
  for (const { channel, calls } of hour.channels) out(`  ${channel}: ${calls} call${calls === 1 ? '' : 's'}`);
  out(
    "  The cap counts messages delivered in the last 60 minutes, which the channel's floor keeps; a call that wrote no message is not one. `--verbose` transcripts show its count when it stops a turn.",
  );
}
