import type { Command } from 'commander';
import { runTriageEval } from '../triageEval.js';
import type { CliContext } from './cliContext.js';

/** `troupe triage-eval <file>`: labelled emails through the triage router, scored. */
export function registerTriageEvalCommand(program: Command, context: CliContext): void {
  program
    .command('triage-eval')
    .description(
      'Run labelled emails (JSONL: {"email": ..., "label": "ignore"|"notify"|"respond"} per line) through the triage router and print accuracy and a confusion matrix.',
    )
    .argument('<file>', 'labelled emails, e.g. examples/email/triage-eval.jsonl')
    .option(
      '--preferences <file>',
      'triage preferences to evaluate: YAML/JSON { instructions, rules } or Markdown instructions',
    )
    .option('--json', 'print the report as JSON')
    .action(async (file: string, flags: { preferences?: string; json?: boolean }) => {
      context.exitCode = await runTriageEval({
        file,
        ...(flags.preferences ? { preferencesFile: flags.preferences } : {}),
        json: flags.json ?? false,
        stdout: context.io.stdout,
        stderr: context.stderr,
        env: context.io.env,
      });
    });
}
