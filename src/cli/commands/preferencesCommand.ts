import type { Command } from 'commander';
import { preferenceProfiles, runPreferences } from '../emailPreferences.js';
import type { CliContext } from './cliContext.js';

/** `troupe preferences [which]`: what the email assistant has learned, and how it changed. */
export function registerPreferencesCommand(program: Command, context: CliContext): void {
  program
    .command('preferences')
    .description(
      'What the email assistant has learned from your answers: the triage, response and calendar preferences as they stand, and with --history every earlier version and what it changed.',
    )
    .argument('[which]', `one of: ${Object.keys(preferenceProfiles).join(', ')} (default: all)`)
    .option('--history', 'list every version with the lines it added and removed')
    .action(async (which: string | undefined, flags: { history?: boolean }) => {
      context.exitCode = await runPreferences({
        ...(which !== undefined ? { which } : {}),
        history: flags.history ?? false,
        stdout: context.io.stdout,
        stderr: context.stderr,
        env: context.io.env,
      });
    });
}
