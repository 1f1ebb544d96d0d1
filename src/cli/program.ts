import { readdir } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Argument, Command, CommanderError, Option } from 'commander';
import { ConfigError } from '../config/configError.js';
import type { CoordinationConfig } from '../config/coordinationConfig.js';
import { loadCoordinationConfig } from '../config/coordinationFromEnv.js';
import { terminalText } from '../delivery/terminalText.js';
import { chartFormats } from '../inspect/renderStatechart.js';
import { type DiagramFormat, statechartDiagram } from '../inspect/statechartDiagram.js';
import { logLevelFromEnv } from '../logging/logLevel.js';
import { avatarPresenceMachine } from '../machines/avatarPresence.machine.js';
import { conversationThreadMachine } from '../machines/conversationThread.machine.js';
import { emailLifecycleMachine } from '../machines/emailLifecycle.machine.js';
import { pendingChoiceMachine } from '../machines/pendingChoice.machine.js';
import { describe, TroupeError } from '../ports/troupeError.js';
import { formatTranscript } from '../simulator/formatTranscript.js';
import { runScenario } from '../simulator/runScenario.js';
import { loadScenarioFile, ScenarioError } from '../simulator/scenario.js';
import { runCharts } from './charts.js';
import { runChat } from './chat.js';
import { bolder, dimmer } from './conversationPrinter.js';
import { runDiscord } from './discord.js';
import { runDiscordShards } from './discordShards.js';
import { runEmail, runInboxAnswer, runInboxList, runInboxRetry, runInboxShow } from './email.js';
import { preferenceProfiles, runPreferences } from './emailPreferences.js';
import { runEmailStatus } from './emailStatus.js';
import { fail } from './fail.js';
import { runGmailAuth } from './gmailAuth.js';
import { EXIT_STORE_BUSY, EXIT_STORE_FULL, exitCodeOf } from './storeErrors.js';
import { runStudio } from './studio.js';
import { formatPlaySummary, playScenario } from './tour.js';
import { playEmailAct } from './tourEmail.js';
import { runTriageEval } from './triageEval.js';

/** Where the CLI writes and what it reads from its surroundings; tests pass their own. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** Whether stdout is a terminal (ANSI dim is used only then). */
  isTTY: boolean;
  /** Where relative paths of `troupe charts` start. Default: process.cwd(). */
  cwd?: string;
  /** Where `troupe chat` reads lines from. Default: process.stdin. */
  stdin?: NodeJS.ReadableStream;
  /**
   * Resolves with the signal's name when the process is asked to stop; `troupe discord` runs
   * until then. Default: the first SIGINT or SIGTERM.
   */
  stopSignal?: () => Promise<string>;
}

/**
 * Exit codes: 0 ok, 1 unexpected failure or usage error, 2 bad scenario or bad configuration,
 * 74 the store's disk is full ({@link EXIT_STORE_FULL}), 75 the store is held by another process
 * ({@link EXIT_STORE_BUSY}).
 */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_BAD_INPUT = 2;

// Works from src/cli (tsx) and from dist/cli (built): both sit two levels under the package root.
const examplesDir = new URL('../../examples/', import.meta.url);

function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    isTTY: process.stdout.isTTY === true,
    stdin: process.stdin,
    stopSignal: () =>
      new Promise<string>((resolve) => {
        const stop = (signal: NodeJS.Signals) => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve(signal);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      }),
  };
}

interface ChatFlags {
  avatars?: string;
  name: string;
  channel: string;
}

interface SimulateFlags {
  json?: boolean;
  verbose?: boolean;
}

/** Machines `troupe diagram` can draw. */
const diagramMachines = {
  email: emailLifecycleMachine,
  thread: conversationThreadMachine,
  presence: avatarPresenceMachine,
  choice: pendingChoiceMachine,
} as const;

const diagramFormats: readonly DiagramFormat[] = ['mermaid', 'dot', 'scxml', 'json'];

/**
 * Runs the `troupe` command line with `argv` (the arguments after the program name) and returns
 * the exit code instead of exiting, so it can be embedded and tested in-process.
 */
export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let exitCode = EXIT_OK;
  // Errors quote what came from outside (a file's keys and values, an environment variable, a
  // path), and JSON quoting leaves 8-bit controls in place: none of it may drive the terminal.
  const stderr = (text: string) => io.stderr(terminalText(text));
  const useColor = (io.isTTY && io.env.NO_COLOR === undefined) || (io.env.FORCE_COLOR ?? '0') !== '0';

  const baseConfig = (): CoordinationConfig | undefined => {
    try {
      return loadCoordinationConfig(io.env);
    } catch (error) {
      if (!ConfigError.isInstance(error)) throw error;
      exitCode = fail(stderr, error.code, error.message);
      return undefined;
    }
  };

  const loadScenario = async (file: string) => {
    try {
      return await loadScenarioFile(file);
    } catch (error) {
      if (!ScenarioError.isInstance(error)) throw error;
      stderr(`error ${error.message}\n`);
      exitCode = EXIT_BAD_INPUT;
      return undefined;
    }
  };

  const simulate = async (file: string, flags: SimulateFlags): Promise<boolean> => {
    const config = baseConfig();
    if (!config) return false;
    const scenario = await loadScenario(file);
    if (!scenario) return false;
    const result = runScenario(scenario, { config });
    if (flags.json) {
      const { scenario: s, config: c, transcript, summary } = result;
      io.stdout(`${JSON.stringify({ scenario: s, config: c, transcript, summary }, null, 2)}\n`);
    } else {
      io.stdout(formatTranscript(result, { color: useColor, verbose: flags.verbose ?? false }));
    }
    return true;
  };

  const program = new Command('troupe')
    .description('Troupe: an actor-model runtime for conversational avatars in chat channels.')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: stderr })
    .addHelpText(
      'after',
      `\nExit codes: ${EXIT_OK} done; ${EXIT_FAILURE} unexpected failure or usage error; ${EXIT_BAD_INPUT} bad input or configuration (the line names it); ${EXIT_STORE_FULL} the store's disk is full (TROUPE_STORE_FULL); ${EXIT_STORE_BUSY} another process holds the store (TROUPE_STORE_BUSY). Nothing is half done on ${EXIT_STORE_FULL} or ${EXIT_STORE_BUSY}: run the command again once it is fixed.`,
    )
    // Every command, whether it logs or not, refuses a LOG_LEVEL it could not use.
    .hook('preAction', () => {
      logLevelFromEnv(io.env);
    });

  program
    .command('simulate')
    .description('Run a scenario file (YAML or JSON) in simulated time with offline scripted avatars.')
    .argument('<file>', 'scenario file, e.g. examples/summon-followup-exit.yaml')
    .option('--json', 'print { scenario, config, transcript, summary } as JSON')
    .option('--verbose', 'also show claims and suppressed candidates inline')
    .action(async (file: string, flags: SimulateFlags) => {
      await simulate(file, flags);
    });

  program
    .command('tour')
    .description(
      'A short guided scenario played by the real runtime on a simulated clock: summon, mentions, and a conversation thread to its natural end; then an email act (triage, a notify answered with feedback, a draft sent).',
    )
    .option('--verbose', 'also show claims and suppressed candidates inline')
    .action(async (flags: SimulateFlags) => {
      const config = baseConfig();
      if (!config) return;
      const scenario = await loadScenario(fileURLToPath(new URL('tour.yaml', examplesDir)));
      if (!scenario) return;
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
      io.stdout('\n');
      await playEmailAct({
        mailboxFile: fileURLToPath(new URL('email/sample-mailbox.jsonl', examplesDir)),
        write: (line) => io.stdout(`${line}\n`),
        color: useColor,
      });
      const others = (await readdir(examplesDir))
        .filter((f) => /\.(ya?ml|json)$/.test(f) && f !== 'tour.yaml')
        .sort();
      io.stdout(
        '\nNow talk to the avatars yourself: `npm run chat` (or `npx troupe chat`); type /help once inside.\n' +
          `Next: run another scenario with \`npx troupe simulate examples/<file>\` (${others.join(', ')}).\n` +
          'Add --verbose to see suppressed candidates, or --json for machine-readable output.\n' +
          'See it all in the browser: `npm run studio` (or `npx troupe studio`) — the state charts, live actors, the inbox and a playground.\n',
      );
    });

  program
    .command('chat')
    .description(
      'Chat in a terminal channel with the avatars of a file, on the real runtime (offline scripted replies unless a model is configured).',
    )
    .option('--avatars <file>', 'avatars file, YAML or JSON (default: examples/chat/avatars.yaml)')
    .option('--name <name>', 'your name in the channel', 'Guest')
    .option('--channel <id>', 'the channel id: you are in terminal:<id>', 'lobby')
    .action(async (flags: ChatFlags) => {
      const config = baseConfig();
      if (!config) return;
      const avatarsFile = flags.avatars ?? fileURLToPath(new URL('chat/avatars.yaml', examplesDir));
      const shown = relative(process.cwd(), avatarsFile);
      exitCode = await runChat({
        avatarsFile,
        avatarsLabel:
          flags.avatars ?? (shown && !shown.startsWith('..') && !isAbsolute(shown) ? shown : avatarsFile),
        name: flags.name,
        channel: flags.channel,
        config,
        input: io.stdin ?? process.stdin,
        stdout: io.stdout,
        stderr,
        env: io.env,
        isTTY: io.isTTY,
        color: useColor,
      });
    });

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
    .action(async (flags: { host?: string; port?: string }) => {
      exitCode = await runStudio({
        ...(flags.host !== undefined ? { host: flags.host } : {}),
        ...(flags.port !== undefined ? { port: flags.port } : {}),
        stdout: io.stdout,
        stderr,
        env: io.env,
        stopSignal: io.stopSignal?.() ?? new Promise<string>(() => undefined),
      });
    });

  program
    .command('discord')
    .description(
      'Run the avatars of a file on Discord: DISCORD_TOKEN from the environment (see the README, "Run it on your Discord server").',
    )
    .option('--avatars <file>', 'avatars file, YAML or JSON (default: examples/discord/avatars.yaml)')
    .option(
      '--guild <id>',
      'register the slash commands in this server (instant; repeat for several); default: globally',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option('--shards <count>', 'run one process per shard with discord.js sharding: auto or a number')
    .action(async (flags: { avatars?: string; guild: string[]; shards?: string }) => {
      const config = baseConfig();
      if (!config) return;
      const stopSignal = io.stopSignal?.() ?? new Promise<string>(() => undefined);
      if (flags.shards !== undefined) {
        const script = process.argv[1];
        if (!script) throw new Error('cannot tell which script to run for the shards');
        // Each shard runs this same command, without --shards.
        const args = argv.filter(
          (a, i) => a !== '--shards' && argv[i - 1] !== '--shards' && !a.startsWith('--shards='),
        );
        exitCode = await runDiscordShards({
          shards: flags.shards,
          script,
          args,
          execArgv: process.execArgv,
          env: io.env,
          stdout: io.stdout,
          stderr,
          stopSignal,
        });
        return;
      }
      exitCode = await runDiscord({
        avatarsFile: flags.avatars ?? fileURLToPath(new URL('discord/avatars.yaml', examplesDir)),
        guildIds: flags.guild,
        config,
        stdout: io.stdout,
        stderr,
        env: io.env,
        stopSignal,
      });
    });

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
      '--status',
      'show how the Gmail sync stands (last successful sync, cursor, messages behind, last error) and the emails that failed',
    )
    .action(async (flags: { mailbox?: string; watch?: boolean; status?: boolean }) => {
      if (flags.status) {
        exitCode = await runEmailStatus({ stdout: io.stdout, stderr, env: io.env });
        return;
      }
      exitCode = await runEmail({
        mailboxFile: flags.mailbox ?? fileURLToPath(new URL('email/sample-mailbox.jsonl', examplesDir)),
        mailboxGiven: flags.mailbox !== undefined,
        ...(flags.watch
          ? { watch: true, stopSignal: io.stopSignal?.() ?? new Promise<string>(() => undefined) }
          : {}),
        stdout: io.stdout,
        stderr,
        env: io.env,
      });
    });

  program
    .command('gmail')
    .description('The Gmail account Troupe works on.')
    .command('auth')
    .description(
      'Authorise Troupe on your Gmail and Calendar: prints Google’s consent page to open, waits for the browser on 127.0.0.1, and saves the refresh token in TROUPE_DATA_DIR (mode 0600). Needs GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET (a “Desktop app” OAuth client).',
    )
    .action(async () => {
      exitCode = await runGmailAuth({
        stdout: io.stdout,
        stderr,
        env: io.env,
        stopSignal: io.stopSignal?.() ?? new Promise<string>(() => undefined),
      });
    });

  const inbox = program.command('inbox').description('The email assistant’s interrupts: what waits for you.');
  inbox
    .command('list')
    .description(
      'List the interrupts waiting for you, with what each allows, and the emails that failed, with why.',
    )
    .option('--json', 'print them as a JSON array (the shape is inboxListJsonSchema in troupe/email)')
    .action(async (flags: { json?: boolean }) => {
      exitCode = await runInboxList({ json: flags.json ?? false, stdout: io.stdout, stderr, env: io.env });
    });
  inbox
    .command('show')
    .description('Show one interrupt whole: the email, the proposed call, what you may answer.')
    .argument('<id>', 'the interrupt id, from troupe inbox list')
    .option('--json', 'print it as a JSON object (the shape is inboxItemJsonSchema in troupe/email)')
    .action(async (id: string, flags: { json?: boolean }) => {
      exitCode = await runInboxShow({
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
      exitCode = await runInboxAnswer({
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
      exitCode = await runInboxRetry({ emailId, stdout: io.stdout, stderr, env: io.env });
    });

  program
    .command('preferences')
    .description(
      'What the email assistant has learned from your answers: the triage, response and calendar preferences as they stand, and with --history every earlier version and what it changed.',
    )
    .argument('[which]', `one of: ${Object.keys(preferenceProfiles).join(', ')} (default: all)`)
    .option('--history', 'list every version with the lines it added and removed')
    .action(async (which: string | undefined, flags: { history?: boolean }) => {
      exitCode = await runPreferences({
        ...(which !== undefined ? { which } : {}),
        history: flags.history ?? false,
        stdout: io.stdout,
        stderr,
        env: io.env,
      });
    });

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
      exitCode = await runTriageEval({
        file,
        ...(flags.preferences ? { preferencesFile: flags.preferences } : {}),
        json: flags.json ?? false,
        stdout: io.stdout,
        stderr,
        env: io.env,
      });
    });

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
    .action(async (flags: { format: string; out?: string; module?: string; export?: string[] }) => {
      exitCode = await runCharts({
        format: flags.format,
        ...(flags.out !== undefined ? { out: flags.out } : {}),
        ...(flags.module !== undefined ? { module: flags.module } : {}),
        ...(flags.export !== undefined ? { exports: flags.export } : {}),
        cwd: io.cwd ?? process.cwd(),
        stdout: io.stdout,
        stderr,
      });
    });

  program
    .command('diagram')
    .description(
      'Print one statechart for design review: Mermaid (paste into Markdown), Graphviz DOT, SCXML or JSON (troupe charts exports them all).',
    )
    .addArgument(new Argument('<machine>', 'the machine to draw').choices(Object.keys(diagramMachines)))
    .addOption(
      new Option('--format <format>', 'the diagram format').choices(diagramFormats).default('mermaid'),
    )
    .action((name: keyof typeof diagramMachines, flags: { format: DiagramFormat }) => {
      io.stdout(statechartDiagram(diagramMachines[name], flags.format));
    });

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
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
  return exitCode;
}
