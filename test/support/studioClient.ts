import { PassThrough } from 'node:stream';
import { type CliIo, runCli } from '../../src/cli/program.js';

/** A studio's API as a test calls it: found from the URL a command printed (with its token). */
export interface StudioClient {
  /** `GET /api/<path>`, or `POST` with `body` as JSON; the status and the parsed answer. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read a few fields of the state's JSON.
  api(path: string, body?: unknown): Promise<{ status: number; body: Record<string, any> }>;
  base: string;
  token: string;
}

/** The studio whose `Troupe Studio…: http://127.0.0.1:<port>/#token=<token>` line `printed` holds. */
export function studioClient(printed: string): StudioClient {
  const [, base = '', token = ''] =
    /Troupe Studio[^:]*: (http:\/\/127\.0\.0\.1:\d+\/)#token=([\w-]+)/u.exec(printed) ?? [];
  return {
    base,
    token,
    async api(path, body) {
      const response = await fetch(`${base}api/${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
  };
}

/** A `troupe chat --studio <args>` run in-process on a memory store, typed into through `stdin`. */
export interface ChatWithStudio {
  stdin: PassThrough;
  exit: Promise<number>;
  stdout: () => string;
}

/** Starts `troupe chat --studio <args>`; its studio's URL is in `stdout()` once printed. */
export function chatWithStudio(args: readonly string[]): ChatWithStudio {
  const stdin = new PassThrough();
  let stdout = '';
  const io: CliIo = {
    stdout: (t) => (stdout += t),
    stderr: () => {},
    env: { TROUPE_STORE: 'memory', LOG_LEVEL: 'silent', NO_COLOR: '1' },
    isTTY: false,
    stdin,
  };
  const exit = runCli(['chat', '--studio', ...args], io);
  return { stdin, exit, stdout: () => stdout };
}
