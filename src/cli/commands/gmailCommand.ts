import type { Command } from 'commander';
import { runGmailAuth } from '../gmailAuth.js';
import type { CliContext } from './cliContext.js';

/** `troupe gmail auth`: authorises Troupe on a Gmail account. */
export function registerGmailCommand(program: Command, context: CliContext): void {
  program
    .command('gmail')
    .description('The Gmail account Troupe works on.')
    .command('auth')
    .description(
      'Authorise Troupe on your Gmail and Calendar: prints Google’s consent page to open, waits for the browser on 127.0.0.1, and saves the refresh token in TROUPE_DATA_DIR (mode 0600). Needs GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET (a “Desktop app” OAuth client).',
    )
    .action(async () => {
      context.exitCode = await runGmailAuth({
        stdout: context.io.stdout,
        stderr: context.stderr,
        env: context.io.env,
        stopSignal: context.stopSignal(),
      });
    });
}
