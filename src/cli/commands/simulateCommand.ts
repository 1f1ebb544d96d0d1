import type { Command } from 'commander';
import { formatTranscript } from '../../simulator/formatTranscript.js';
import { runScenario } from '../../simulator/runScenario.js';
import { scenarioModelProblem } from '../avatarModelCheck.js';
import { fail } from '../fail.js';
import type { CliContext } from './cliContext.js';

export interface SimulateFlags {
  json?: boolean;
  verbose?: boolean;
}

/** `troupe simulate <file>`: a scenario file played in simulated time, printed as a transcript. */
export function registerSimulateCommand(program: Command, context: CliContext): void {
  program
    .command('simulate')
    .description('Run a scenario file (YAML or JSON) in simulated time with offline scripted avatars.')
    .argument('<file>', 'scenario file, e.g. examples/summon-followup-exit.yaml')
    .option('--json', 'print { scenario, config, models, transcript, summary } as JSON')
    .option('--verbose', 'also show claims and suppressed candidates inline')
    .action(async (file: string, flags: SimulateFlags) => {
      await simulate(context, file, flags);
    });
}

async function simulate(context: CliContext, file: string, flags: SimulateFlags): Promise<void> {
  const config = context.baseConfig();
  if (!config) return;
  const scenario = await context.loadScenario(file);
  if (!scenario) return;
  const problem = scenarioModelProblem(scenario, context.io.env);
  if (problem) {
    context.exitCode = fail(context.stderr, problem.code, problem.message);
    return;
  }
  const result = runScenario(scenario, { config });
  if (flags.json) {
    const { scenario: s, config: c, models, transcript, summary } = result;
    context.io.stdout(
      `${JSON.stringify({ scenario: s, config: c, models, transcript, summary }, null, 2)}\n`,
    );
  } else {
    context.io.stdout(formatTranscript(result, { color: context.useColor, verbose: flags.verbose ?? false }));
  }
}
