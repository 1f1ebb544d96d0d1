import type { Command } from 'commander';
import { runStudio } from '../studio.js';
import type { CliContext } from './cliContext.js';

/** `troupe studio`: Troupe Studio served for the browser. */
export function registerStudioCommand(program: Command, context: CliContext): void {
  program
    .command('studio')
    .description(
      'Troupe Studio in the browser: the statecharts with the live actors, the email inbox, a playground channel with the avatars, telemetry. Served on 127.0.0.1 with a token; embedded defaults (the tour’s avatars, the demo ERP, the sample mailbox).',
    )
    .option(
      '--host <host>',
      'the address to listen on (default 127.0.0.1; another exposes the studio to the network)',
    )
    .option('--port <port>', 'the port (default 4319; 0 picks a free one)')
    .option(
      '--scenario <file>',
      "a scenario file whose avatars (with their model:) and channel the playground uses (default: the tour's)",
    )
    .action(async (flags: { host?: string; port?: string; scenario?: string }) => {
      context.exitCode = await runStudio({
        ...(flags.host !== undefined ? { host: flags.host } : {}),
        ...(flags.port !== undefined ? { port: flags.port } : {}),
        ...(flags.scenario !== undefined ? { scenario: flags.scenario } : {}),
        stdout: context.io.stdout,
        stderr: context.stderr,
        env: context.io.env,
        stopSignal: context.stopSignal(),
      });
    });
}
