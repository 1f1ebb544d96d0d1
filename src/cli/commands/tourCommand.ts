import { readdir } from 'node:fs/promises';
import type { Command } from 'commander';
import { bolder, dimmer } from '../conversationStyle.js';
import { formatPlaySummary, playScenario } from '../tour.js';
import { playEmailAct } from '../tourEmail.js';
import type { CliContext } from './cliContext.js';
import type { SimulateFlags } from './simulateCommand.js';

/** `troupe tour`: the guided scenario, then the email act, then where to go next. */
export function registerTourCommand(program: Command, context: CliContext): void {
  program
    .command('tour')
    .description(
      'A short guided scenario played by the real runtime on a simulated clock: summon, mentions, and a conversation thread to its natural end; then an email act (triage, a notify answered with feedback, a draft sent).',
    )
    .option('--verbose', 'also show claims and suppressed candidates inline')
    .action(async (flags: SimulateFlags) => {
      if (!(await playTourScenario(context, flags))) return;
      context.io.stdout('\n');
      await playEmailAct({
        mailboxFile: context.examplesPath('email/sample-mailbox.jsonl'),
        write: (line) => context.io.stdout(`${line}\n`),
        color: context.useColor,
      });
      await printNextSteps(context);
    });
}

/** Plays examples/tour.yaml with its heading and summary; false when it could not start. */
async function playTourScenario(context: CliContext, flags: SimulateFlags): Promise<boolean> {
  const { io, useColor } = context;
  const config = context.baseConfig();
  if (!config) return false;
  const scenario = await context.loadScenario(context.examplesPath('tour.yaml'));
  if (!scenario) return false;
  const bold = bolder(useColor);
  const dim = dimmer(useColor);
  const description = scenario.description ? ` — ${scenario.description.trim()}` : '';
  io.stdout(`${bold(`▶ ${scenario.name}${description}`)}\n`);
  io.stdout(
    `${dim('Played by the Troupe runtime (channel actors, turn pipeline, routing, terminal transport) on a simulated clock, with the offline scripted model. [n] numbers the messages.')}\n\n`,
  );
  const result = await playScenario(scenario, {
    config,
    write: (line) => io.stdout(`${line}\n`),
    color: useColor,
    verbose: flags.verbose ?? false,
  });
  io.stdout(`\n${formatPlaySummary(scenario.name, result, useColor)}\n`);
  return true;
}

async function printNextSteps(context: CliContext): Promise<void> {
  const others = (await readdir(context.examplesDir))
    .filter((f) => /\.(ya?ml|json)$/.test(f) && f !== 'tour.yaml')
    .sort();
  context.io.stdout(
    '\nNow talk to the avatars yourself: `npm run chat` (or `npx troupe chat`); type /help once inside.\n' +
      `Next: run another scenario with \`npx troupe simulate examples/<file>\` (${others.join(', ')}).\n` +
      'Add --verbose to see suppressed candidates, or --json for machine-readable output.\n' +
      'See it all in the browser: `npm run studio` (or `npx troupe studio`) — the state charts, live actors, the inbox and a playground.\n',
  );
}
