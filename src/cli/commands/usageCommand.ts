import { type Command, Option } from 'commander';
import type { UsageGrouping } from '../../ports/usage.js';
import { runUsage, USAGE_GROUPINGS } from '../usage.js';
import type { CliContext } from './cliContext.js';

/** `troupe usage`: model calls, tokens and estimated cost from the usage ledger, and the daily caps. */
export function registerUsageCommand(program: Command, context: CliContext): void {
  program
    .command('usage')
    .description(
      'Model calls, tokens, characters and estimated cost from the usage ledger in the store (every process sharing it), grouped, and each daily cap with how much of it today (UTC) used.',
    )
    .addOption(new Option('--by <grouping>', 'group by').choices(USAGE_GROUPINGS).default('avatar'))
    .option('--since <when>', 'a span back from now (90m, 24h, 7d) or a time (2026-11-27)', '24h')
    .option('--json', 'print the rows, the total and the caps as JSON')
    .option('--avatars <file>', "avatars file: each avatar's own caps (caps:) replace the per-avatar ones")
    .action(async (flags: { by: UsageGrouping; since: string; json?: boolean; avatars?: string }) => {
      context.exitCode = await runUsage({
        by: flags.by,
        since: flags.since,
        json: flags.json ?? false,
        avatarsFile: flags.avatars,
        stdout: context.io.stdout,
        stderr: context.stderr,
        env: context.io.env,
      });
    });
}
