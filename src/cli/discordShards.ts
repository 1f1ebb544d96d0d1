import { REST, Routes, ShardingManager } from 'discord.js';
import { discordSettingsFromEnv } from '../adapters/discord/discordSettings.js';
import { isTroupeError } from '../ports/troupeError.js';
import { type DiscordShardPlan, readDiscordShardPlan } from './discordShardPlan.js';
import { fail } from './fail.js';

/** How `troupe discord --shards` runs its shards. */
export interface DiscordShardsOptions {
  /** `auto` (Discord's recommendation), a count, or shard ids (with `shardCount`). */
  shards: string;
  /** How many shards all hosts run together; required with a list of ids in `shards`. */
  shardCount?: string | undefined;
  /** The script each shard runs (this CLI) and its arguments (`discord --avatars ...`). */
  script: string;
  args: readonly string[];
  /** Node flags for the shard processes (e.g. tsx's loader). */
  execArgv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  stopSignal: Promise<string>;
}

/**
 * Runs one process per shard with discord.js's `ShardingManager`: each shard process runs
 * `troupe discord` for its share of the guilds, with its own runtime on the shared store
 * (MongoDB across machines; SQLite on one machine). Discord sends each guild's events to one
 * shard, and the store's channel leases and processed ids keep any overlap (a reshard, a
 * restart) from answering a message twice. Stops every shard on SIGINT / SIGTERM.
 */
export async function runDiscordShards(options: DiscordShardsOptions): Promise<number> {
  let plan: DiscordShardPlan;
  let settings: ReturnType<typeof discordSettingsFromEnv>;
  try {
    plan = readDiscordShardPlan({ shards: options.shards, shardCount: options.shardCount });
    settings = discordSettingsFromEnv(options.env);
  } catch (error) {
    if (!isTroupeError(error)) throw error;
    return fail(options.stderr, error.code, error.message);
  }
  let total: number;
  let ids: readonly number[];
  // Discord lets `max_concurrency` shards identify together every 5 s; one at a time by default.
  let concurrency = 1;
  if (plan.kind === 'auto') {
    const recommended = await recommendedShards(settings, options.stderr);
    if (typeof recommended === 'number') return recommended;
    ({ total, concurrency } = recommended);
    ids = [...Array(total).keys()];
  } else {
    ({ total, ids } = plan);
  }

  const manager = new ShardingManager(options.script, {
    totalShards: total,
    shardList: [...ids],
    shardArgs: [...options.args],
    execArgv: [...options.execArgv],
    token: settings.token,
    respawn: true,
    mode: 'process',
  });
  manager.on('shardCreate', (shard) =>
    options.stdout(`Shard ${shard.id} (of ${total}, ids from 0) starting.\n`),
  );
  try {
    // Each shard process prints its own banner and errors; a shard that cannot log in ends the run.
    await manager.spawn({ amount: total, delay: concurrency >= ids.length ? 0 : 5_500, timeout: 60_000 });
  } catch (error) {
    for (const shard of manager.shards.values()) shard.kill();
    return fail(
      options.stderr,
      'TROUPE_DISCORD_LOGIN_FAILED',
      `A shard did not start: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const signal = await options.stopSignal;
  options.stdout(`Stopping ${ids.length} shard(s) (${signal})…\n`);
  await Promise.all(
    [...manager.shards.values()].map(
      (shard) =>
        new Promise<void>((resolve) => {
          const child = shard.process;
          if (!child || child.exitCode !== null) {
            resolve();
            return;
          }
          child.once('exit', () => resolve());
          // SIGTERM, without a respawn: each shard stops cleanly (replies drained or left in the outbox).
          shard.kill();
        }),
    ),
  );
  return 0;
}

/** Asks Discord how many shards to run and how many may identify together, or the exit code. */
async function recommendedShards(
  settings: ReturnType<typeof discordSettingsFromEnv>,
  stderr: (text: string) => void,
): Promise<{ total: number; concurrency: number } | number> {
  try {
    // Asked through DISCORD_API_URL too (discord.js's own helper always asks discord.com).
    const rest = new REST({ ...(settings.apiUrl ? { api: settings.apiUrl } : {}) }).setToken(settings.token);
    const info = (await rest.get(Routes.gatewayBot())) as {
      shards: number;
      session_start_limit?: { max_concurrency?: number };
    };
    return {
      total: Math.max(1, info.shards),
      concurrency: Math.max(1, info.session_start_limit?.max_concurrency ?? 1),
    };
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status === 401)
      return fail(
        stderr,
        'TROUPE_DISCORD_TOKEN_INVALID',
        'Discord refused the bot token. Copy it again from the Developer Portal (Bot → Reset Token) into DISCORD_TOKEN.',
      );
    return fail(
      stderr,
      'TROUPE_DISCORD_LOGIN_FAILED',
      `Could not ask Discord how many shards to run: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
