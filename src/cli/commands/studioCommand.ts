import type { Command } from 'commander';
import { runStudio } from '../studio.js';
import type { CliContext } from './cliContext.js';

/** `troupe studio`: Troupe Studio served for the browser. */
export function registerStudioCommand(program: Command, context: CliContext): void {
  program
    .command('studio')
    .description(
      'Troupe Studio in the browser, on the store every command reads (TROUPE_DATA_DIR, MONGODB_URI or --store): the inbox `troupe inbox list` shows (answers go into the store), the stored floors, telemetry. Served on 127.0.0.1 with a token. --demo runs the embedded demo instead (the tour’s avatars in a playground, the demo ERP, the sample mailbox, a memory store).',
    )
    .option('--store <dir|mongodb-uri>', 'the store to attach to (default: TROUPE_DATA_DIR or MONGODB_URI)')
    .option('--demo', 'run the embedded demo on a memory store instead of attaching to a store')
    .option(
      '--avatars <file>',
      "the avatars file the bot or chat runs with, so the stored floors show the avatars' names (ids without it)",
    )
    .option(
      '--host <host>',
      'the address to listen on (default 127.0.0.1; another exposes the studio to the network)',
    )
    .option('--port <port>', 'the port (default 4319; 0 picks a free one)')
    .option(
      '--scenario <file>',
      "the demo with a scenario file's avatars (with their model:) and channel in the playground (implies --demo)",
    )
    .action(
      async (flags: {
        host?: string;
        port?: string;
        scenario?: string;
        demo?: boolean;
        store?: string;
        avatars?: string;
      }) => {
        context.exitCode = await runStudio({
          ...(flags.host !== undefined ? { host: flags.host } : {}),
          ...(flags.port !== undefined ? { port: flags.port } : {}),
          ...(flags.scenario !== undefined ? { scenario: flags.scenario } : {}),
          ...(flags.demo ? { demo: true } : {}),
          ...(flags.store !== undefined ? { store: flags.store } : {}),
          ...(flags.avatars !== undefined ? { avatarsFile: flags.avatars } : {}),
          stdout: context.io.stdout,
          stderr: context.stderr,
          env: context.io.env,
          stopSignal: context.stopSignal(),
        });
      },
    );
}
