import type { Command } from 'commander';
import { runEmail } from '../email.js';
import { runEmailStatus } from '../emailStatus.js';
import type { CliContext } from './cliContext.js';

interface EmailFlags {
  mailbox?: string;
  watch?: boolean;
  status?: boolean;
  studio?: boolean;
}

/** `troupe email`: the email assistant on Gmail or a mailbox file, or how the Gmail sync stands. */
export function registerEmailCommand(program: Command, context: CliContext): void {
  program
    .command('email')
    .description(
      'Run the email assistant on Gmail when Google credentials are set (one pass; --watch keeps polling), else on a mailbox file (one email per line, any input shape; default: the sample mailbox), and show each triage decision and what waits for you.',
    )
    .option(
      '--mailbox <file>',
      'emails, one JSON object per line (default: examples/email/sample-mailbox.jsonl)',
    )
    .option('--watch', 'keep polling Gmail every TROUPE_GMAIL_POLL_SECONDS until Ctrl-C')
    .option(
      '--studio',
      'with --watch: serve Troupe Studio from this process over the live assistant (127.0.0.1, a fresh token; the URL is printed)',
    )
    .option(
      '--status',
      'show how the Gmail sync stands (last successful sync, cursor, messages behind, last error) and the emails that failed',
    )
    .action(async (flags: EmailFlags) => {
      const { io, stderr } = context;
      if (flags.status) {
        context.exitCode = await runEmailStatus({ stdout: io.stdout, stderr, env: io.env });
        return;
      }
      context.exitCode = await runEmail({
        mailboxFile: flags.mailbox ?? context.examplesPath('email/sample-mailbox.jsonl'),
        mailboxGiven: flags.mailbox !== undefined,
        ...(flags.watch ? { watch: true, stopSignal: context.stopSignal() } : {}),
        ...(flags.studio ? { studio: true } : {}),
        stdout: io.stdout,
        stderr,
        env: io.env,
      });
    });
}
