import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { MiddlewareHandler } from 'hono';
import { studioErrorCodes } from '../ports/errorCodes.js';
import { errorAnswer, type StudioEnv, studioFailure } from './studioHttp.js';

/** Loopback names and addresses, as a URL's hostname spells them. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
/** The port a browser leaves out of the Host header (and of an Origin) for `http:`. */
const HTTP_DEFAULT_PORT = 80;

/** Where the studio listens: the address it was bound to and the port it got. */
export interface StudioAddress {
  /** The address given to `listen` (`0.0.0.0` or `::` when bound to all). */
  host: string;
  port: number;
}

/**
 * Whether a `name[:port]` (a Host header, or an Origin's host) names the studio at `bound`: a
 * loopback name, the bound address, or (bound to all) any address; and its port. A browser leaves
 * the port out when it is the scheme's default, so on port 80 a bare name names the studio too.
 * Anything else — another name (DNS rebinding), credentials, a path — does not.
 */
export function namesStudio(hostPort: string, bound: StudioAddress): boolean {
  let parsed: URL;
  try {
    parsed = new URL(`http://${hostPort}`);
  } catch {
    return false;
  }
  // The URL parser drops an explicit `:80` too, so both spellings read as the default port.
  const port = parsed.port === '' ? HTTP_DEFAULT_PORT : Number(parsed.port);
  if (port !== bound.port || parsed.username || parsed.password || parsed.pathname !== '/') return false;
  const name = parsed.hostname.toLowerCase();
  const bare = name.replace(/^\[|\]$/gu, '');
  const wildcard = bound.host === '0.0.0.0' || bound.host === '::';
  return (
    LOOPBACK.has(name) ||
    name === bound.host.toLowerCase() ||
    bare === bound.host ||
    (wildcard && isIP(bare) !== 0)
  );
}

/** What a client sent before the router saw its request: the Host header and the request target. */
interface SentRequest {
  host: string;
  target: string;
}
const sentRequests = new WeakMap<IncomingMessage, SentRequest>();
/** The host every request is routed under; the Host the client sent is judged by the guard. */
const ROUTING_HOST = 'studio.invalid';

/**
 * Wraps node-server's request listener so that every request reaches the guard. node-server builds
 * the request's URL from the Host header and the target, and answers a bare 400 to a pair it cannot
 * parse (no Host, `a@b`, an absolute or `*` target); here it always gets a fixed host and an
 * origin-form target, and the guard judges what the client really sent.
 */
export function routeEveryRequest(
  listener: (incoming: IncomingMessage, outgoing: ServerResponse) => unknown,
): (incoming: IncomingMessage, outgoing: ServerResponse) => void {
  return (incoming, outgoing) => {
    const sent = { host: incoming.headers.host ?? '', target: incoming.url ?? '/' };
    sentRequests.set(incoming, sent);
    incoming.headers.host = ROUTING_HOST;
    if (!isOriginForm(sent.target)) incoming.url = '/';
    void listener(incoming, outgoing);
  };
}

/** `/path?query`, without a backslash (which URL parsers read as a slash); `//x` is a path here. */
const isOriginForm = (target: string): boolean => target.startsWith('/') && !target.includes('\\');

/**
 * The middleware in front of every route: a Host that does not name the studio (DNS rebinding) is
 * refused with 403, as is a browser's request from a page of another origin; a target that is not
 * a path is 404. Refusals of `/api…` are never cached.
 */
export function studioHostGuard(bound: () => StudioAddress): MiddlewareHandler<StudioEnv> {
  return async (c, next) => {
    const sent = sentRequests.get(c.env.incoming) ?? { host: '', target: '' };
    const api = sent.target.startsWith('/api');
    const isOurs = (hostPort: string) => namesStudio(hostPort, bound());
    if (!isOurs(sent.host))
      return errorAnswer(
        studioFailure(
          studioErrorCodes.host,
          'The Host header does not name this studio; use the URL it printed.',
          403,
        ),
        { api },
      );
    const origin = c.req.header('origin');
    if (origin !== undefined && !isOurOrigin(origin, isOurs))
      return errorAnswer(
        studioFailure(studioErrorCodes.origin, 'Requests from pages of another origin are refused.', 403),
        { api },
      );
    if (!isOriginForm(sent.target))
      return errorAnswer(studioFailure(studioErrorCodes.notFound, 'Nothing there.', 404), { api });
    await next();
  };
}

function isOurOrigin(origin: string, isOurs: (hostPort: string) => boolean): boolean {
  try {
    const parsed = new URL(origin);
    return parsed.protocol === 'http:' && parsed.origin === origin && isOurs(parsed.host);
  } catch {
    return false;
  }
}
