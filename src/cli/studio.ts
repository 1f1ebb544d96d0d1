import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { type ModelFromEnv, modelFromEnv } from '../adapters/llm/modelFromEnv.js';
import { sqliteStorePath } from '../adapters/store/storeFromEnv.js';
import { avatarCreationFromEnv } from '../config/avatarCreationSettings.js';
import { zodIssues } from '../config/zodIssues.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { logLevelFromEnv } from '../logging/logLevel.js';
import { configErrorCodes } from '../ports/errorCodes.js';
import { describe, isTroupeError } from '../ports/troupeError.js';
import { type OpenedStudio, openStudio } from '../studio/openStudio.js';
import { DEFAULT_STUDIO_PORT } from '../studio/studioServer.js';
import { avatarCreationOf } from './avatarCreationOf.js';
import { loadAvatarsFile } from './avatarsFile.js';
import { fail, readOrFail } from './fail.js';
import { exitCodeOf } from './storeErrors.js';
import { envWithStore } from './storeFlag.js';
import { openStoreStudio } from './studioOnStore.js';

/** What `troupe studio` needs from the command line and its surroundings. */
export interface StudioCliOptions {
  host?: string;
  port?: string;
  /** A scenario file whose avatars (and their `model:`) and channel the demo's playground uses (implies `demo`). */
  scenario?: string;
  /** Run the embedded demo instead of attaching to the store. */
  demo?: boolean;
  /** The store to attach to: a directory (SQLite) or a MongoDB URI; default: the environment's. */
  store?: string;
  /** On the store: the avatars file the bot or chat runs with, for the avatars' names. */
  avatarsFile?: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** Resolves when the process is asked to stop (SIGINT/SIGTERM, or the test). */
  stopSignal: Promise<string>;
}

const flagsSchema = z.object({
  host: z.string().trim().min(1, 'an address or host name').max(253).default('127.0.0.1'),
  port: z.coerce.number().int('a whole number').min(0).max(65_535).default(DEFAULT_STUDIO_PORT),
});

/** A studio the command runs, whichever kind, with what it prints and how it stops. */
interface RunningStudio {
  studio: OpenedStudio;
  /** Lines printed after the URL. */
  lines: string[];
  close(): Promise<void>;
}

/**
 * `troupe studio [--store s] [--demo] [--host h] [--port p]`: Troupe Studio on the store every
 * command reads (`TROUPE_DATA_DIR` / `MONGODB_URI`, or `--store`): its inbox, its floors, its
 * telemetry; answers go into it. With `--demo` (or `--scenario`): the embedded demo (the tour's
 * avatars in a playground channel, the demo ERP, the sample mailbox, a memory store). Served until
 * the stop signal; prints the page's URL with its token. Returns the exit code.
 */
export async function runStudio(options: StudioCliOptions): Promise<number> {
  const parsed = flagsSchema.safeParse({ host: options.host, port: options.port });
  if (!parsed.success) {
    const problems = zodIssues(parsed.error, '(flags)', { prefix: '--' });
    return fail(options.stderr, configErrorCodes.invalid, `${problems}`);
  }
  const { host, port } = parsed.data;
  const demo = options.demo === true || options.scenario !== undefined;
  if (demo && options.store !== undefined)
    return fail(
      options.stderr,
      configErrorCodes.invalid,
      '--store attaches the studio to a store; the demo (--demo, --scenario) runs on its own memory store. Give one or the other.',
    );
  if (demo && options.avatarsFile !== undefined)
    return fail(
      options.stderr,
      configErrorCodes.invalid,
      "--avatars names the avatars of a store's floors; the demo takes its avatars from --scenario. Give one or the other.",
    );
  let logger: Logger;
  try {
    logger = createLogger({ level: logLevelFromEnv(options.env, 'warn') });
  } catch (error) {
    if (!isTroupeError(error)) throw error;
    return fail(options.stderr, error.code, error.message);
  }
  let running: RunningStudio | number;
  try {
    running = demo
      ? await openDemo(options, host, port, logger)
      : await openOnStore(options, { host, port, logger });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL' || code === 'EACCES') {
      return fail(
        options.stderr,
        configErrorCodes.invalid,
        `cannot listen on ${host}:${port} (${code}); pick another with --port (0: any free port) or --host.`,
      );
    }
    if (isTroupeError(error)) {
      return fail(options.stderr, error.code, error.message, exitCodeOf(error));
    }
    options.stderr(`error: ${describe(error)}\n`);
    return 1;
  }
  if (typeof running === 'number') return running;
  const { studio } = running;
  options.stdout(`Troupe Studio: ${studio.url}#token=${studio.token}\n`);
  for (const line of running.lines) options.stdout(`${line}\n`);
  if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1')
    options.stdout(`Listening on ${host}: anyone who can reach it and has the token can use it.\n`);
  options.stdout('Open the URL in a browser; Ctrl-C stops the studio.\n');
  const signal = await options.stopSignal;
  await running.close();
  options.stdout(`Studio stopped (${signal}).\n`);
  return 0;
}

/** The studio on the store: what it prints is where the store is and what waits in its inbox. */
async function openOnStore(
  options: StudioCliOptions,
  listen: { host: string; port: number; logger: Logger },
): Promise<RunningStudio | number> {
  const env = envWithStore(options.env, options.store);
  // A reader attaches to what a chat or bot wrote: a named directory without a store is a typo,
  // not a new empty store.
  const dir = env.TROUPE_STORE === 'sqlite' && options.store !== undefined ? env.TROUPE_DATA_DIR : undefined;
  if (dir !== undefined && !existsSync(sqliteStorePath(dir)))
    return fail(
      options.stderr,
      configErrorCodes.invalid,
      `--store ${dir} holds no Troupe store (no ${sqliteStorePath(resolve(dir))}). Give the directory troupe chat, discord or email write to (their TROUPE_DATA_DIR), a mongodb:// URI, or leave --store out for the environment's store.`,
    );
  const avatars =
    options.avatarsFile === undefined
      ? []
      : await readOrFail(options.stderr, () => loadAvatarsFile(options.avatarsFile as string));
  if (typeof avatars === 'number') return avatars;
  const opened = await openStoreStudio(env, { ...listen, avatars }, options.stderr);
  if (typeof opened === 'number') return opened;
  const waiting = opened.studio.studioStore.getSnapshot().context.interrupts.length;
  return {
    studio: opened.studio,
    lines: [
      `Store: ${opened.where} (answers given in the studio go into it; --demo runs the demo instead)`,
      `Inbox: ${waiting} waiting`,
    ],
    close: () => opened.close(),
  };
}

/** The demo: the environment's model (offline when none is configured), and the models avatars name. */
async function openDemo(
  options: StudioCliOptions,
  host: string,
  port: number,
  logger: Logger,
): Promise<RunningStudio> {
  // As `troupe chat`: the environment's model and the models avatars name, built from its keys and profiles.
  const model: ModelFromEnv = modelFromEnv(options.env, { logger });
  const creation = avatarCreationOf(avatarCreationFromEnv(options.env, true), model, logger);
  const studio = await openStudio({
    host,
    port,
    logger,
    model: model.model,
    models: model.models,
    avatarCreation: creation,
    ...(options.scenario !== undefined ? { scenarioFile: options.scenario } : {}),
  });
  const lines = [
    `Demo: the tour's avatars, the sample mailbox, a memory store`,
    `Model: ${model.description}`,
  ];
  for (const avatar of studio.runtime.avatars) {
    const own = studio.runtime.modelOf(avatar.id);
    if (own !== studio.runtime.model) lines.push(`  ${avatar.name}: ${own.id}`);
  }
  return { studio, lines, close: () => studio.close() };
}
