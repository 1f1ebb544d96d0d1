import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/configError.js';
import { logLevelFromEnv } from '../logging/logLevel.js';
import { describe, TroupeError } from '../ports/troupeError.js';
import { type CliIo, processIo } from './cliIo.js';
import { registerChartsCommand } from './commands/chartsCommand.js';
import { registerChatCommand } from './commands/chatCommand.js';
import { type CliContext, createCliContext } from './commands/cliContext.js';
import { registerDiagramCommand } from './commands/diagramCommand.js';
import { registerDiscordCommand } from './commands/discordCommand.js';
import { registerEmailCommand } from './commands/emailCommand.js';
import { registerGmailCommand } from './commands/gmailCommand.js';
import { registerInboxCommand } from './commands/inboxCommand.js';
import { registerPreferencesCommand } from './commands/preferencesCommand.js';
import { registerSimulateCommand } from './commands/simulateCommand.js';
import { registerStudioCommand } from './commands/studioCommand.js';
import { registerTourCommand } from './commands/tourCommand.js';
import { registerTriageEvalCommand } from './commands/triageEvalCommand.js';
import { registerUsageCommand } from './commands/usageCommand.js';
import { EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_OK } from './exitCodes.js';
import { fail } from './fail.js';
import { EXIT_STORE_BUSY, EXIT_STORE_FULL, exitCodeOf } from './storeErrors.js';

export type { CliIo } from './cliIo.js';
export { EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_OK } from './exitCodes.js';

/**
 * Runs the `troupe` command line with `argv` (the arguments after the program name) and returns
 * the exit code instead of exiting, so it can be embedded and tested in-process.
 */
export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const context = createCliContext(argv, io);
  const program = createProgram(context);
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    return exitCodeForError(error, context.stderr);
  }
  return context.exitCode;
}

/** The `troupe` program with every command, in the order its help lists them. */
function createProgram(context: CliContext): Command {
  const { io } = context;
  const program = new Command('troupe')
    .description('Troupe: an actor-model runtime for conversational avatars in chat channels.')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: context.stderr })
    .addHelpText(
      'after',
      `\nExit codes: ${EXIT_OK} done; ${EXIT_FAILURE} unexpected failure or usage error; ${EXIT_BAD_INPUT} bad input or configuration (the line names it); ${EXIT_STORE_FULL} the store's disk is full (TROUPE_STORE_FULL); ${EXIT_STORE_BUSY} another process holds the store (TROUPE_STORE_BUSY). Nothing is half done on ${EXIT_STORE_FULL} or ${EXIT_STORE_BUSY}: run the command again once it is fixed.`,
    )
    // Every command, whether it logs or not, refuses a LOG_LEVEL it could not use.
    .hook('preAction', () => {
      logLevelFromEnv(io.env);
    });
  registerSimulateCommand(program, context);
  registerTourCommand(program, context);
  registerChatCommand(program, context);
  registerStudioCommand(program, context);
  registerDiscordCommand(program, context);
  registerEmailCommand(program, context);
  registerGmailCommand(program, context);
  registerInboxCommand(program, context);
  registerPreferencesCommand(program, context);
  registerTriageEvalCommand(program, context);
  registerUsageCommand(program, context);
  registerChartsCommand(program, context);
  registerDiagramCommand(program, context);
  return program;
}

/** The exit code for what a command threw, reported on stderr unless commander already did. */
function exitCodeForError(error: unknown, stderr: (text: string) => void): number {
  if (error instanceof CommanderError) {
    // Help and version are "errors" to commander; their code is 0. A value outside an option's
    // or argument's choices is bad input, like any other refused flag.
    if (error.exitCode === 0) return EXIT_OK;
    return error.code === 'commander.invalidArgument' ? EXIT_BAD_INPUT : EXIT_FAILURE;
  }
  // A Troupe error says what happened and what to do; its stack would only hide that.
  if (TroupeError.isInstance(error)) {
    return fail(
      stderr,
      error.code,
      error.message,
      exitCodeOf(error, ConfigError.isInstance(error) ? EXIT_BAD_INPUT : EXIT_FAILURE),
    );
  }
  stderr(`error: ${error instanceof Error ? (error.stack ?? error.message) : describe(error)}\n`);
  return EXIT_FAILURE;
}
