import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { humanResponseSchema } from '../email/agentInbox.js';
import { type Logger, silentLogger } from '../logging/logger.js';
import { studioErrorCodes, type TroupeErrorCode } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';
import type { StudioChart } from './studioCharts.js';
import { namesStudio } from './studioHost.js';
import type { StudioState } from './studioState.js';
import type { StudioStore } from './studioStore.js';

/** The default port of `troupe studio`. */
export const DEFAULT_STUDIO_PORT = 4319;
/** The largest JSON body a POST route reads. */
export const MAX_BODY_BYTES = 64 * 1024;
/** How long a POST's body may take to arrive once its headers have. */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;
/** The live stream sends at most one state per this many ms. */
const COALESCE_MS = 100;
/** A comment line keeps idle streams open through proxies. */
const PING_MS = 15_000;

/** What the POST routes do: passed in by whoever wires the studio (see `openStudio`). */
export interface StudioActions {
  /**
   * Answers an interrupt (Agent Inbox shape, already validated). Throws a TroupeError whose
   * `details.status` is the HTTP status (404 unknown, 409 answered, 400 not allowed).
   */
  answer(
    interruptId: string,
    answer: z.infer<typeof humanResponseSchema>,
  ): Promise<{ item: unknown; emailState: unknown }>;
  /**
   * Runs a failed email again (EmailAssistant.retry). Throws a TroupeError whose `details.status`
   * is the HTTP status (404 unknown email, 409 not failed).
   */
  retry(emailId: string): Promise<{ emailState: unknown }>;
  /** Posts the person's message to the playground; returns its message id. */
  post(message: { text: string; replyTo?: string }): { id: string };
  summon(avatarId: string): void;
  dismiss(avatarId: string): void;
}

/** How the studio's server is started. */
export interface StudioServerOptions {
  store: StudioStore;
  /** Default 127.0.0.1; `0.0.0.0` or another address only when asked (`--host`). */
  host?: string;
  /** Default {@link DEFAULT_STUDIO_PORT}; 0 picks a free one. */
  port?: number;
  /** Default: 32 random bytes, base64url. */
  token?: string;
  actions: StudioActions;
  /** The charts, rendered on the first request and kept. */
  charts: () => Promise<StudioChart[]>;
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

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'",
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

const messageBody = z.strictObject({
  text: z.string().trim().min(1, 'text is empty').max(4_000),
  replyTo: z.string().min(1).max(200).optional(),
});
const avatarBody = z.strictObject({ avatarId: z.string().min(1).max(100) });

const failure = (code: TroupeErrorCode, message: string, status: number) =>
  new TroupeError(code, message, { details: { status } });
/** A refused body: the rest of it is not read, so the connection closes after the answer. */
const bodyFailure = (message: string, status: number) =>
  new TroupeError(studioErrorCodes.badRequest, message, { details: { status, closeConnection: true } });

/**
 * Starts Troupe Studio's HTTP server (node:http): the page's files, the JSON API and the live
 * stream (Server-Sent Events). Every `/api` request needs the token (`Authorization: Bearer`, or
 * `?token=` on `/api/events`, which `EventSource` cannot give headers); requests from another
 * origin, or naming another host (DNS rebinding), are refused. See docs/studio.md.
 */
export async function startStudioServer(options: StudioServerOptions): Promise<StudioServer> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? randomBytes(32).toString('base64url');
  const expected = Buffer.from(token);
  const logger = options.logger ?? silentLogger();
  const staticDir = resolve(options.staticDir ?? defaultStaticDir);
  const { store } = options;
  let charts: Promise<StudioChart[]> | undefined;
  const streams = new Set<ServerResponse>();
  let port = 0;

  const wildcard = host === '0.0.0.0' || host === '::';
  const isOurs = (hostPort: string): boolean => namesStudio(hostPort, { host, port });

  const authorized = (req: IncomingMessage, url: URL, allowQuery: boolean): boolean => {
    const header = req.headers.authorization;
    let given: string | undefined;
    if (header?.startsWith('Bearer ')) given = header.slice('Bearer '.length).trim();
    else if (allowQuery) given = url.searchParams.get('token') ?? undefined;
    if (given === undefined) return false;
    const buffer = Buffer.from(given);
    return buffer.length === expected.length && timingSafeEqual(buffer, expected);
  };

  const send = (res: ServerResponse, status: number, body: unknown, api = true, close = false) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      ...SECURITY_HEADERS,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
      ...(api ? { 'Cache-Control': 'no-store' } : {}),
      // Node ends the socket once this answer is out, instead of reading a body nobody wants.
      ...(close ? { Connection: 'close' } : {}),
    });
    res.end(text);
  };
  const sendError = (res: ServerResponse, error: TroupeError, api = true) => {
    const status = typeof error.details?.status === 'number' ? error.details.status : 400;
    const close = error.details?.closeConnection === true;
    send(res, status, { error: { code: error.code, message: error.message } }, api, close);
  };

  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  /** The body, at most MAX_BODY_BYTES, within bodyTimeoutMs; neither a trickle nor a flood holds on. */
  const readBody = (req: IncomingMessage): Promise<Buffer> =>
    new Promise((resolveBody, rejectBody) => {
      const declared = Number(req.headers['content-length'] ?? 0);
      if (declared > MAX_BODY_BYTES)
        return rejectBody(bodyFailure(`The body is over ${MAX_BODY_BYTES} bytes.`, 400));
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const stop = (error?: Error) => {
        if (done) return;
        done = true;
        clearTimeout(deadline);
        req.off('data', onData);
        req.off('end', onEnd);
        // onError stays: a client that goes away after the answer is no crash.
        if (error) rejectBody(error);
        else resolveBody(Buffer.concat(chunks));
      };
      const deadline = setTimeout(
        () => stop(bodyFailure(`The body did not arrive within ${bodyTimeoutMs} ms.`, 408)),
        bodyTimeoutMs,
      );
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) stop(bodyFailure(`The body is over ${MAX_BODY_BYTES} bytes.`, 400));
        else chunks.push(chunk);
      };
      const onEnd = () => stop();
      // A client gone before its body (a closed tab) is no failure of the studio's.
      const onError = () => stop(bodyFailure('The client went away before its body arrived.', 400));
      if (req.destroyed) return onError();
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('error', onError);
      req.on('close', () => {
        if (!req.complete) onError();
      });
    });

  const readJson = async (req: IncomingMessage): Promise<unknown> => {
    const body = await readBody(req);
    let value: unknown;
    let prototypeKey = false;
    try {
      // zod drops a `__proto__` key without a word (an edit would go out without it): refuse it.
      value = JSON.parse(body.toString('utf8'), (key, v) => {
        if (key === '__proto__') prototypeKey = true;
        return v;
      });
    } catch {
      throw failure(studioErrorCodes.badRequest, 'The body is not JSON.', 400);
    }
    if (prototypeKey)
      throw failure(
        studioErrorCodes.badRequest,
        'The body has a “__proto__” key; no field has that name.',
        400,
      );
    return value;
  };
  const parse = <T>(schema: z.ZodType<T>, value: unknown): T => {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    throw failure(
      studioErrorCodes.badRequest,
      `The body is not right: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ')}.`,
      400,
    );
  };

  const stream = (req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
    });
    // A client that stops reading gets nothing more until it drains, then the newest state only:
    // each state is whole, so the ones in between need not be kept for it.
    let blocked = false;
    const write = (state: StudioState) => {
      blocked = !res.write(`event: state\ndata: ${JSON.stringify(state)}\n\n`);
    };
    let sentAt = Date.now();
    let sentVersion = store.getSnapshot().context.version;
    write(store.getSnapshot().context);
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      timer = undefined;
      const state = store.getSnapshot().context;
      if (blocked || state.version === sentVersion) return;
      sentVersion = state.version;
      sentAt = Date.now();
      write(state);
    };
    const subscription = store.subscribe(() => {
      if (timer) return;
      timer = setTimeout(flush, Math.max(0, sentAt + COALESCE_MS - Date.now()));
    });
    res.on('drain', () => {
      blocked = false;
      if (!timer) flush();
    });
    const ping = setInterval(() => {
      if (!blocked) blocked = !res.write(': ping\n\n');
    }, PING_MS);
    ping.unref();
    streams.add(res);
    const end = () => {
      subscription.unsubscribe();
      clearInterval(ping);
      if (timer) clearTimeout(timer);
      streams.delete(res);
    };
    req.on('close', end);
    res.on('close', end);
  };

  const serveStatic = async (res: ServerResponse, pathname: string) => {
    const notFound = () =>
      sendError(res, failure(studioErrorCodes.notFound, `Nothing at ${pathname}.`, 404), false);
    let relative: string;
    try {
      relative = decodeURIComponent(pathname === '/' ? '/index.html' : pathname);
    } catch {
      return notFound();
    }
    if (relative.includes('\0')) return notFound();
    const file = normalize(join(staticDir, relative));
    if (!file.startsWith(staticDir + sep)) return notFound();
    try {
      if (!(await stat(file)).isFile()) return notFound();
      const body = await readFile(file);
      res.writeHead(200, {
        ...SECURITY_HEADERS,
        'Content-Type': CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
        'Content-Length': body.length,
        'Cache-Control': 'no-cache',
      });
      res.end(body);
    } catch {
      notFound();
    }
  };

  const api = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    const route = `${req.method} ${url.pathname}`;
    if (!authorized(req, url, route === 'GET /api/events'))
      return sendError(
        res,
        failure(
          studioErrorCodes.unauthorized,
          'This needs the studio token: open the URL troupe studio printed (the token follows #token=).',
          401,
        ),
      );
    if (route === 'GET /api/state') return send(res, 200, store.getSnapshot().context);
    if (route === 'GET /api/events') return stream(req, res);
    if (route === 'GET /api/avatars')
      return send(res, 200, { avatars: store.getSnapshot().context.playground.avatars });
    if (route === 'GET /api/charts') {
      charts ??= options.charts();
      return send(res, 200, { charts: await charts });
    }
    const answer = /^\/api\/inbox\/([^/]+)\/answer$/u.exec(url.pathname);
    if (req.method === 'POST' && answer?.[1]) {
      let id: string;
      try {
        id = decodeURIComponent(answer[1]);
      } catch {
        throw failure(studioErrorCodes.notFound, 'No interrupt with that id.', 404);
      }
      const body = parse(humanResponseSchema, await readJson(req));
      return send(res, 200, await options.actions.answer(id, body));
    }
    const retry = /^\/api\/email\/([^/]+)\/retry$/u.exec(url.pathname);
    if (req.method === 'POST' && retry?.[1]) {
      let id: string;
      try {
        id = decodeURIComponent(retry[1]);
      } catch {
        throw failure(studioErrorCodes.notFound, 'No email with that id.', 404);
      }
      return send(res, 200, await options.actions.retry(id));
    }
    if (route === 'POST /api/playground/message') {
      const body = parse(messageBody, await readJson(req));
      return send(
        res,
        202,
        options.actions.post(body.replyTo ? { text: body.text, replyTo: body.replyTo } : { text: body.text }),
      );
    }
    if (route === 'POST /api/playground/summon' || route === 'POST /api/playground/dismiss') {
      const body = parse(avatarBody, await readJson(req));
      if (route.endsWith('summon')) options.actions.summon(body.avatarId);
      else options.actions.dismiss(body.avatarId);
      return send(res, 202, { ok: true });
    }
    sendError(res, failure(studioErrorCodes.notFound, `No route ${req.method} ${url.pathname}.`, 404));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const isApi = (req.url ?? '/').startsWith('/api');
    if (!isOurs(req.headers.host ?? ''))
      return sendError(
        res,
        failure(
          studioErrorCodes.host,
          'The Host header does not name this studio; use the URL it printed.',
          403,
        ),
        isApi,
      );
    const origin = req.headers.origin;
    if (origin !== undefined) {
      let ok = false;
      try {
        const parsed = new URL(origin);
        ok = parsed.protocol === 'http:' && parsed.origin === origin && isOurs(parsed.host);
      } catch {
        ok = false;
      }
      if (!ok)
        return sendError(
          res,
          failure(studioErrorCodes.origin, 'Requests from pages of another origin are refused.', 403),
          isApi,
        );
    }
    // Only origin-form targets (`/path?query`); `//x` is a path here, never another host.
    const target = req.url ?? '/';
    if (!target.startsWith('/'))
      return sendError(res, failure(studioErrorCodes.notFound, 'Nothing there.', 404), isApi);
    const url = new URL(`http://studio.invalid${target}`);
    if (url.pathname === '/api' || url.pathname.startsWith('/api/')) return api(req, res, url);
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return sendError(
        res,
        failure(studioErrorCodes.notFound, `No route ${req.method} ${url.pathname}.`, 404),
        false,
      );
    return serveStatic(res, url.pathname);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (TroupeError.isInstance(error)) {
        if (req.socket.destroyed) logger.debug({ path: req.url?.split('?')[0] }, error.message);
        else if (!res.headersSent) sendError(res, error);
        return;
      }
      logger.error({ err: error, path: req.url?.split('?')[0] }, 'studio request failed');
      if (!res.headersSent)
        send(res, 500, {
          error: {
            code: studioErrorCodes.failed,
            message: 'The studio failed on this request; see its log.',
          },
        });
      else res.end();
    });
  });
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
  const shown = wildcard ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${shown}:${port}/`;
  logger.info({ url, host }, 'Troupe Studio listening');

  let closing: Promise<void> | undefined;
  return {
    url,
    token,
    port,
    close() {
      closing ??= new Promise<void>((done) => {
        for (const res of streams) res.end();
        streams.clear();
        server.close(() => done());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
