import { REST, Routes, ShardingManager } from 'discord.js';
import { discordSettingsFromEnv } from '../adapters/discord/discordSettings.js';
import { ConfigError } from '../config/configError.js';
import { fail } from './fail.js';

/** How `troupe discord --shards` runs its shards. */
export interface DiscordShardsOptions {
  /** `auto` (Discord's recommendation) or a count. */
  shards: string;
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
  let settings: ReturnType<typeof discordSettingsFromEnv>;
  try {
    settings = discordSettingsFromEnv(options.env);
  } catch (error) {
    if (!ConfigError.isInstance(error)) throw error;
    return fail(options.stderr, error.code, error.message);
  }
  let total: number;
  // Discord lets `max_concurrency` shards identify together every 5 s; one at a time by default.
  let concurrency = 1;
  if (options.shards === 'auto') {
    try {
      // Asked through DISCORD_API_URL too (discord.js's own helper always asks discord.com).
      const rest = new REST({ ...(settings.apiUrl ? { api: settings.apiUrl } : {}) }).setToken(
        settings.token,
      );
      const info = (await rest.get(Routes.gatewayBot())) as {
        shards: number;
        session_start_limit?: { max_concurrency?: number };
      };
      total = Math.max(1, info.shards);
      concurrency = Math.max(1, info.session_start_limit?.max_concurrency ?? 1);
    } catch (error) {
      const status = (error as { status?: number }).status;
      if (status === 401)
        return fail(
          options.stderr,
          'TROUPE_DISCORD_TOKEN_INVALID',
          'Discord refused the bot token. Copy it again from the Developer Portal (Bot → Reset Token) into DISCORD_TOKEN.',
        );
      return fail(
        options.stderr,
        'TROUPE_DISCORD_LOGIN_FAILED',
        `Could not ask Discord how many shards to run: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  } else if (/^\d{1,4}$/u.test(options.shards) && Number(options.shards) >= 1) {
    total = Number(options.shards);
  } else {
    return fail(
      options.stderr,
      'TROUPE_CONFIG_INVALID',
      `--shards ${JSON.stringify(options.shards)} is not "auto" or a whole number from 1.`,
    );
  }

  const manager = new ShardingManager(options.script, {
    totalShards: total,
    shardArgs: [...options.args],
    execArgv: [...options.execArgv],
    token: settings.token,
    respawn: true,
    mode: 'process',
  });
  manager.on('shardCreate', (shard) => options.stdout(`Shard ${shard.id + 1} of ${total} starting.\n`));
  try {
    // Each shard process prints its own banner and errors; a shard that cannot log in ends the run.
    await manager.spawn({ amount: total, delay: concurrency >= total ? 0 : 5_500, timeout: 60_000 });
  } catch (error) {
    for (const shard of manager.shards.values()) shard.kill();
    return fail(
      options.stderr,
      'TROUPE_DISCORD_LOGIN_FAILED',
      `A shard did not start: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const signal = await options.stopSignal;
  options.stdout(`Stopping ${total} shard(s) (${signal})…\n`);
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
