import type { Command } from 'commander';
import { runDiscord } from '../discord.js';
import { runDiscordShards } from '../discordShards.js';
import type { CliContext } from './cliContext.js';

interface DiscordFlags {
  avatars?: string;
  guild: string[];
  shards?: string;
  shardCount?: string;
  studio?: boolean;
}

/** `troupe discord`: the avatars of a file on Discord, in one process or one per shard. */
export function registerDiscordCommand(program: Command, context: CliContext): void {
  program
    .command('discord')
    .description(
      'Run the avatars of a file on Discord: DISCORD_TOKEN from the environment (see the README, "Run it on your Discord server").',
    )
    .option('--avatars <file>', 'avatars file, YAML or JSON (default: examples/discord/avatars.yaml)')
    .option(
      '--guild <id>',
      'register the slash commands in this server (instant; repeat for several); default: globally',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option(
      '--shards <which>',
      'run one process per shard with discord.js sharding: auto, a count, or shard ids such as 0,1 (with --shard-count)',
    )
    .option(
      '--shard-count <count>',
      'how many shards all hosts run together, when --shards lists the ids this host runs',
    )
    .option(
      '--studio',
      'serve Troupe Studio from this process over the live bot (127.0.0.1, a fresh token; the URL is printed); its playground only watches',
    )
    .action(async (flags: DiscordFlags) => {
      const config = context.baseConfig();
      if (!config) return;
      const stopSignal = context.stopSignal();
      if (flags.shards !== undefined || flags.shardCount !== undefined) {
        context.exitCode = await runShards(context, flags, stopSignal);
        return;
      }
      context.exitCode = await runDiscord({
        avatarsFile: flags.avatars ?? context.examplesPath('discord/avatars.yaml'),
        guildIds: flags.guild,
        config,
        stdout: context.io.stdout,
        stderr: context.stderr,
        env: context.io.env,
        stopSignal,
        ...(flags.studio ? { studio: true } : {}),
      });
    });
}

/** The flags that choose the shards, which the shard processes themselves do not take. */
const SHARD_FLAGS = ['--shards', '--shard-count'];

function runShards(context: CliContext, flags: DiscordFlags, stopSignal: Promise<string>): Promise<number> {
  const script = process.argv[1];
  if (!script) throw new Error('cannot tell which script to run for the shards');
  // Each shard runs this same command, without the shard flags.
  const { argv } = context;
  const args = argv.filter(
    (a, i) => !SHARD_FLAGS.some((flag) => a === flag || argv[i - 1] === flag || a.startsWith(`${flag}=`)),
  );
  return runDiscordShards({
    shards: flags.shards ?? '',
    shardCount: flags.shardCount,
    script,
    args,
    execArgv: process.execArgv,
    env: context.io.env,
    stdout: context.io.stdout,
    stderr: context.stderr,
    stopSignal,
  });
}
