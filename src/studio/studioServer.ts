import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { getRequestListener } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { secureHeaders } from 'hono/secure-headers';
import { z } from 'zod';
import { type Logger, silentLogger } from '../logging/logger.js';
import { configErrorCodes, studioErrorCodes } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';
import { type StudioActions, studioApi } from './studioApi.js';
import { DEFAULT_BODY_TIMEOUT_MS } from './studioBody.js';
import type { StudioChart } from './studioCharts.js';
import { routeEveryRequest, type StudioAddress, studioHostGuard } from './studioHost.js';
import { errorAnswer, jsonAnswer, type StudioEnv, sentPathname, studioFailure } from './studioHttp.js';
import { LiveStreams } from './studioLiveStream.js';
import type { StudioStore } from './studioStore.js';

export type { StudioActions } from './studioApi.js';
export { DEFAULT_BODY_TIMEOUT_MS, MAX_BODY_BYTES } from './studioBody.js';

/** The default port of `troupe studio`. */
export const DEFAULT_STUDIO_PORT = 4319;

/** How the studio's server is started. */
export interface StudioServerOptions {
  store: StudioStore;
  /** Default 127.0.0.1; `0.0.0.0` or another address only when asked (`--host`). */
  host?: string;
  /** Default {@link DEFAULT_STUDIO_PORT}; 0 picks a free one. */
  port?: number;
  /** Default: 32 random bytes, base64url. A Bearer token's characters: `A-Z a-z 0-9 - . _ ~ + /`, then `=`s. */
  token?: string;
  actions: StudioActions;
  /** The charts, rendered on the first request and kept. */
  charts: () => Promise<StudioChart[]>;
  /** Read before `/api/state` and `/api/events` answer: what other processes changed in the store. */
  refresh?: () => Promise<void>;
  logger?: Logger;
  /** Where the page's files are (default: the package's `studio/` folder). */
  staticDir?: string;
  /** How long a POST's body may take once its headers came (default {@link DEFAULT_BODY_TIMEOUT_MS}). */
  bodyTimeoutMs?: number;
}

/** A running studio server. */
export interface StudioServer {
  /** The page's address, without the token (`http://127.0.0.1:4319/`). */
  url: string;
  token: string;
  port: number;
  /** Ends the live streams and stops listening. */
  close(): Promise<void>;
}

// Two levels below the package root from src/studio and dist/studio alike.
const defaultStaticDir = fileURLToPath(new URL('../../studio/', import.meta.url));

/** The token travels in an `Authorization: Bearer` header, so it has a Bearer token's syntax. */
const tokenSchema = z.string().regex(/^[A-Za-z0-9._~+/-]+=*$/u, 'use A-Z a-z 0-9 - . _ ~ + / and trailing =');

/** The security headers of every answer: the page's own scripts and styles only, never in a frame. */
const studioSecureHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'self'"],
    imgSrc: ["'self'", 'data:'],
    styleSrc: ["'self'", "'unsafe-inline'"],
  },
  xContentTypeOptions: true,
  referrerPolicy: 'no-referrer',
  xFrameOptions: 'DENY',
  crossOriginResourcePolicy: false,
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  strictTransportSecurity: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
});

const isApiPath = (path: string) => path === '/api' || path.startsWith('/api/');

interface StudioAppOptions {
  bound: () => StudioAddress;
  token: string;
  staticDir: string;
  streams: LiveStreams;
  logger: Logger;
  options: StudioServerOptions;
}

/** The studio's routes: the guard, the API, the page's files; refusals and failures as JSON. */
function studioApp({ bound, token, staticDir, streams, logger, options }: StudioAppOptions): Hono<StudioEnv> {
  const app = new Hono<StudioEnv>();
  app.use('*', studioSecureHeaders, studioHostGuard(bound));
  app.route(
    '/api',
    studioApi({
      store: options.store,
      token,
      actions: options.actions,
      charts: options.charts,
      ...(options.refresh ? { refresh: options.refresh } : {}),
      streams,
      logger,
      bodyTimeoutMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
    }),
  );
  const files = serveStatic<StudioEnv>({ root: staticDir });
  app.on(['GET', 'HEAD'], '*', async (c, next) => {
    if (isApiPath(c.req.path)) return next();
    const answer = await files(c, next);
    if (answer instanceof Response) answer.headers.set('Cache-Control', 'no-cache');
    return answer;
  });
  app.notFound((c) => {
    const path = sentPathname(c.req.url);
    const api = isApiPath(path);
    const message =
      api || (c.req.method !== 'GET' && c.req.method !== 'HEAD')
        ? `No route ${c.req.method} ${path}.`
        : `Nothing at ${path}.`;
    return errorAnswer(studioFailure(studioErrorCodes.notFound, message, 404), { api });
  });
  app.onError((error, c) => studioFailureAnswer(error, c.env.incoming, logger));
  return app;
}

/** A refusal or failure thrown by a route, as its answer; a client already gone only gets a debug line. */
function studioFailureAnswer(
  error: Error,
  incoming: StudioEnv['Bindings']['incoming'],
  logger: Logger,
): Response {
  if (error instanceof HTTPException) return error.getResponse();
  const path = incoming.url?.split('?')[0];
  if (TroupeError.isInstance(error)) {
    if (incoming.socket.destroyed) logger.debug({ path }, error.message);
    return errorAnswer(error);
  }
  logger.error({ err: error, path }, 'studio request failed');
  return jsonAnswer(500, {
    error: { code: studioErrorCodes.failed, message: 'The studio failed on this request; see its log.' },
  });
}

/**
 * Starts Troupe Studio's HTTP server (hono on node:http): the page's files, the JSON API and the
 * live stream (Server-Sent Events). Every `/api` request needs the token (`Authorization: Bearer`,
 * or `?token=` on `/api/events`, which `EventSource` cannot give headers); requests from another
 * origin, or naming another host (DNS rebinding), are refused. See docs/studio.md.
 */
export async function startStudioServer(options: StudioServerOptions): Promise<StudioServer> {
  const host = options.host ?? '127.0.0.1';
  const token = studioToken(options.token);
  const logger = options.logger ?? silentLogger();
  const streams = new LiveStreams();
  let port = 0;
  const app = studioApp({
    bound: () => ({ host, port }),
    token,
    staticDir: options.staticDir ?? defaultStaticDir,
    streams,
    logger,
    options,
  });
  // No global Request/Response swapped in: the studio runs inside other people's processes.
  const server = createServer(
    routeEveryRequest(getRequestListener(app.fetch, { overrideGlobalObjects: false })),
  );
  // The default headers timeout and keep-alive suit a local tool; streams have no request timeout.
  server.requestTimeout = 0;
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_STUDIO_PORT, host, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  const address = server.address();
  port = typeof address === 'object' && address ? address.port : 0;
  const wildcard = host === '0.0.0.0' || host === '::';
  const shown = wildcard ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${shown}:${port}/`;
  logger.info({ url, host }, 'Troupe Studio listening');

  let closing: Promise<void> | undefined;
  return {
    url,
    token,
    port,
    close() {
      closing ??= streams.endAll().then(
        () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      );
      return closing;
    },
  };
}

function studioToken(given: string | undefined): string {
  if (given === undefined) return randomBytes(32).toString('base64url');
  const parsed = tokenSchema.safeParse(given);
  if (parsed.success) return parsed.data;
  throw new TroupeError(
    configErrorCodes.invalid,
    `The studio token is not a Bearer token: ${parsed.error.issues[0]?.message ?? 'bad characters'}.`,
  );
}
