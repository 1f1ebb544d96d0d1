import { isIP } from 'node:net';

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
