import type { EmailAssistant } from '../actors/email/emailAssistant.js';
import type { Runtime } from '../actors/runtimeOptions.js';
import type { TerminalTransport } from '../adapters/terminal/terminalTransport.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import { emailErrorCodes, studioErrorCodes } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';
import { inboxStudioActions, playgroundStudioActions } from './runtimeStudioActions.js';
import type { StudioActions } from './studioApi.js';
import { renderStudioCharts } from './studioCharts.js';
import type { StudioProjection } from './studioProjection.js';
import { type StudioServer, startStudioServer } from './studioServer.js';
import type { StudioStore } from './studioStore.js';

/** What {@link serveStudio} serves: a projection already attached to a running runtime. */
export interface ServeStudioOptions {
  runtime: Runtime;
  /** The store the projection keeps up to date (one per runtime: the page reads it). */
  studioStore: StudioStore;
  projection: StudioProjection;
  /** The email assistant whose inbox the page answers (none: answers are refused). */
  assistant?: EmailAssistant;
  /**
   * The channel the page may post in, summon and dismiss (a terminal channel of the runtime).
   * None: the playground only watches, and its POSTs are refused with 403.
   */
  playground?: {
    transport: TerminalTransport;
    channel: { kind: string; id: string };
    person: { id: string; name: string };
  };
  /**
   * How often the projection reads the store again for what other processes changed (wall-clock
   * ms; an unref'd timer). Default: never (the page's own reads still refresh).
   */
  refreshMs?: number;
  host?: string;
  port?: number;
  token?: string;
  logger?: Logger;
  staticDir?: string;
  bodyTimeoutMs?: number;
}

const refused = (code: TroupeError['code'], message: string, status: number): never => {
  throw new TroupeError(code, message, { details: { status } });
};

/** The message a refused playground POST carries. */
export const READ_ONLY_PLAYGROUND =
  'The playground only watches this runtime: start it with --playground to post, summon and dismiss from the page.';

/**
 * Serves the studio over a runtime that runs already (a chat, a Discord bot, the email watcher):
 * the page shows its live actors through its one projection, and answers go to its email
 * assistant. The page's reads of `/api/state` and `/api/events` first read the store again (see
 * `StudioProjection.refresh`). Closing stops the server and the refresh, not the runtime.
 */
export async function serveStudio(options: ServeStudioOptions): Promise<StudioServer> {
  const { runtime, assistant, playground, projection } = options;
  const logger = options.logger ?? silentLogger();
  const refresh = () =>
    projection.refresh().catch((error: unknown) => {
      logger.warn({ err: error }, 'the studio could not read the store again; it shows what it had');
    });
  const server = await startStudioServer({
    store: options.studioStore,
    ...(options.host !== undefined ? { host: options.host } : {}),
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.token !== undefined ? { token: options.token } : {}),
    actions: attachedActions(runtime, assistant, playground),
    refresh,
    charts: renderStudioCharts,
    logger,
    ...(options.staticDir !== undefined ? { staticDir: options.staticDir } : {}),
    ...(options.bodyTimeoutMs !== undefined ? { bodyTimeoutMs: options.bodyTimeoutMs } : {}),
  });
  const timer =
    options.refreshMs !== undefined ? setInterval(() => void refresh(), options.refreshMs) : undefined;
  timer?.unref();
  return {
    ...server,
    close() {
      if (timer) clearInterval(timer);
      return server.close();
    },
  };
}

/** The runtime's actions, with what this studio may not do refused. */
function attachedActions(
  runtime: Runtime,
  assistant: EmailAssistant | undefined,
  playground: ServeStudioOptions['playground'],
): StudioActions {
  const noInbox = () =>
    refused(
      emailErrorCodes.inboxInvalid,
      'This process runs no email assistant; nothing to answer here.',
      404,
    );
  const readOnly = () => refused(studioErrorCodes.readOnly, READ_ONLY_PLAYGROUND, 403);
  return {
    ...(assistant ? inboxStudioActions(assistant) : { answer: noInbox, retry: noInbox }),
    ...(playground
      ? playgroundStudioActions({ runtime, ...playground })
      : { post: readOnly, summon: readOnly, dismiss: readOnly, create: readOnly }),
  };
}
