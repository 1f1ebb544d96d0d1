import type { Command } from 'commander';
import { runInboxAnswer, runInboxList, runInboxRetry, runInboxShow } from '../email.js';
import type { CliContext } from './cliContext.js';

/** `troupe inbox list|show|answer|retry`: the email assistant's interrupts and failed emails. */
export function registerInboxCommand(program: Command, context: CliContext): void {
  const { io, stderr } = context;
  const inbox = program.command('inbox').description('The email assistant’s interrupts: what waits for you.');
  inbox
    .command('list')
    .description(
      'List the interrupts waiting for you, with what each allows, and the emails that failed, with why.',
    )
    .option('--json', 'print them as a JSON array (the shape is inboxListJsonSchema in troupe/email)')
    .action(async (flags: { json?: boolean }) => {
      context.exitCode = await runInboxList({
        json: flags.json ?? false,
        stdout: io.stdout,
        stderr,
        env: io.env,
      });
    });
  inbox
    .command('show')
    .description('Show one interrupt whole: the email, the proposed call, what you may answer.')
    .argument('<id>', 'the interrupt id, from troupe inbox list')
    .option('--json', 'print it as a JSON object (the shape is inboxItemJsonSchema in troupe/email)')
    .action(async (id: string, flags: { json?: boolean }) => {
      context.exitCode = await runInboxShow({
        id,
        json: flags.json ?? false,
        stdout: io.stdout,
        stderr,
        env: io.env,
      });
    });
  inbox
    .command('answer')
    .description(
      'Answer an interrupt: accept, edit (the arguments as JSON), response (your feedback) or ignore.',
    )
    .argument('<id>', 'the interrupt id, from troupe inbox list')
    .argument('<type>', 'accept, edit, response or ignore')
    .argument('[text...]', 'feedback for response; the edited arguments as JSON for edit')
    .action(async (id: string, type: string, text: string[]) => {
      context.exitCode = await runInboxAnswer({
        id,
        type,
        ...(text.length > 0 ? { text: text.join(' ') } : {}),
        stdout: io.stdout,
        stderr,
        env: io.env,
      });
    });
  inbox
    .command('retry')
    .description(
      'Run a failed email again from triage, keeping the calls made and answers given (`troupe inbox list` shows failed emails and why).',
    )
    .argument('<email-id>', 'the id of the failed email')
    .action(async (emailId: string) => {
      context.exitCode = await runInboxRetry({ emailId, stdout: io.stdout, stderr, env: io.env });
    });
}
