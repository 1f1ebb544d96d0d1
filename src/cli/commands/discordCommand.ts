import type { Command } from 'commander';
import { runDiscord } from '../discord.js';
import { runDiscordShards } from '../discordShards.js';
import type { CliContext } from './cliContext.js';

interface DiscordFlags {
  avatars?: string;
  guild: string[];
  shards?: string;
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
    .option('--shards <count>', 'run one process per shard with discord.js sharding: auto or a number')
    .action(async (flags: DiscordFlags) => {
      const config = context.baseConfig();
      if (!config) return;
      const stopSignal = context.stopSignal();
      if (flags.shards !== undefined) {
        context.exitCode = await runShards(context, flags.shards, stopSignal);
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
      });
    });
}

function runShards(context: CliContext, shards: string, stopSignal: Promise<string>): Promise<number> {
  const script = process.argv[1];
  if (!script) throw new Error('cannot tell which script to run for the shards');
  // Each shard runs this same command, without --shards.
  const { argv } = context;
  const args = argv.filter(
    (a, i) => a !== '--shards' && argv[i - 1] !== '--shards' && !a.startsWith('--shards='),
  );
  return runDiscordShards({
    shards,
    script,
    args,
    execArgv: process.execArgv,
    env: context.io.env,
    stdout: context.io.stdout,
    stderr: context.stderr,
    stopSignal,
  });
}
