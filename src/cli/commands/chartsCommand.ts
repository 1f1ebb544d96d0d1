import { type Command, Option } from 'commander';
import { chartFormats } from '../../inspect/renderStatechart.js';
import { runCharts } from '../charts.js';
import type { CliContext } from './cliContext.js';

interface ChartsFlags {
  format: string;
  out?: string;
  module?: string;
  export?: string[];
}

/** `troupe charts`: every machine's statechart exported, Troupe's own or a module's. */
export function registerChartsCommand(program: Command, context: CliContext): void {
  program
    .command('charts')
    .description(
      "Export every machine's statechart, drawn from its definition: Troupe's machines, or a module's own XState machines.",
    )
    .addOption(new Option('--format <format>', 'the chart format').choices(chartFormats).default('mermaid'))
    .option(
      '--out <dir>',
      'write one file per machine into this directory (default: stdout; for svg, ./charts)',
    )
    .option(
      '--module <file>',
      "a module whose XState v5 machines to export instead of Troupe's (built .js/.mjs)",
    )
    .option(
      '--export <names...>',
      'only these exports of the module (default: every export that is a machine)',
    )
    .action(async (flags: ChartsFlags) => {
      context.exitCode = await runCharts({
        format: flags.format,
        ...(flags.out !== undefined ? { out: flags.out } : {}),
        ...(flags.module !== undefined ? { module: flags.module } : {}),
        ...(flags.export !== undefined ? { exports: flags.export } : {}),
        cwd: context.io.cwd ?? process.cwd(),
        stdout: context.io.stdout,
        stderr: context.stderr,
      });
    });
}
