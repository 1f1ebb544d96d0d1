import { z } from 'zod';
import { type ModelFromEnv, modelFromEnv } from '../adapters/llm/modelFromEnv.js';
import { zodIssues } from '../config/zodIssues.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { logLevelFromEnv } from '../logging/logLevel.js';
import { configErrorCodes } from '../ports/errorCodes.js';
import { describe, isTroupeError } from '../ports/troupeError.js';
import { openStudio } from '../studio/openStudio.js';
import { DEFAULT_STUDIO_PORT } from '../studio/studioServer.js';
import { fail } from './fail.js';

/** What `troupe studio` needs from the command line and its surroundings. */
export interface StudioCliOptions {
  host?: string;
  port?: string;
  /** A scenario file whose avatars (and their `model:`) and channel the playground uses. */
  scenario?: string;
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

/**
 * `troupe studio [--host h] [--port p]`: Troupe Studio on embedded defaults (the tour's avatars in
 * a playground channel, the demo ERP, the sample mailbox through the email assistant, a memory
 * store), served until the stop signal; prints the page's URL with its token. Returns the exit code.
 */
export async function runStudio(options: StudioCliOptions): Promise<number> {
  const parsed = flagsSchema.safeParse({ host: options.host, port: options.port });
  if (!parsed.success) {
    const problems = zodIssues(parsed.error, '(flags)', { prefix: '--' });
    return fail(options.stderr, configErrorCodes.invalid, `${problems}`);
  }
  const { host, port } = parsed.data;
  let logger: Logger;
  try {
    logger = createLogger({ level: logLevelFromEnv(options.env, 'warn') });
  } catch (error) {
    if (!isTroupeError(error)) throw error;
    return fail(options.stderr, error.code, error.message);
  }
  let model: ModelFromEnv;
  try {
    // As `troupe chat`: the environment's model (offline when none is configured) and the models
    // avatars name, built from its keys and profiles.
    model = modelFromEnv(options.env, { logger });
  } catch (error) {
    if (!isTroupeError(error)) throw error;
    return fail(options.stderr, error.code, error.message);
  }
  let studio: Awaited<ReturnType<typeof openStudio>>;
  try {
    studio = await openStudio({
      host,
      port,
      logger,
      model: model.model,
      models: model.models,
      ...(options.scenario !== undefined ? { scenarioFile: options.scenario } : {}),
    });
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
      return fail(options.stderr, error.code, error.message);
    }
    options.stderr(`error: ${describe(error)}\n`);
    return 1;
  }
  options.stdout(`Troupe Studio: ${studio.url}#token=${studio.token}\n`);
  options.stdout(`Model: ${model.description}\n`);
  for (const avatar of studio.runtime.avatars) {
    const own = studio.runtime.modelOf(avatar.id);
    if (own !== studio.runtime.model) options.stdout(`  ${avatar.name}: ${own.id}\n`);
  }
  if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1')
    options.stdout(`Listening on ${host}: anyone who can reach it and has the token can use it.\n`);
  options.stdout('Open the URL in a browser; Ctrl-C stops the studio.\n');
  const signal = await options.stopSignal;
  await studio.close();
  options.stdout(`Studio stopped (${signal}).\n`);
  return 0;
}
