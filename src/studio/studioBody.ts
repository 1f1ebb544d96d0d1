import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { timeout } from 'hono/timeout';
import type { z } from 'zod';
import { zodIssues } from '../config/zodIssues.js';
import { studioErrorCodes } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';
import { bodyFailure, type StudioEnv, studioFailure } from './studioHttp.js';

/** The largest JSON body a POST route reads. */
export const MAX_BODY_BYTES = 64 * 1024;
/** How long a POST's body may take to arrive once its headers have. */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

const overLimit = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw bodyFailure(`The body is over ${MAX_BODY_BYTES} bytes.`, 400);
  },
});

/**
 * Reads a POST's JSON body, at most {@link MAX_BODY_BYTES} and within `timeoutMs`: neither a
 * trickle nor a flood holds the studio. The deadline covers the reading only, not the action the
 * body asks for. A `__proto__` key is refused (zod would drop it without a word, and an edit would
 * go out without it).
 */
export async function readJsonBody(c: Context<StudioEnv>, timeoutMs: number): Promise<unknown> {
  // node-server's light request cannot be copied by the global Request, which bodyLimit does to
  // a chunked body; it gets a standard one.
  c.req.raw = new Request(c.req.url, {
    method: c.req.method,
    headers: c.req.raw.headers,
    body: c.req.raw.body,
    duplex: 'half',
  } as RequestInit);
  let text = '';
  // hono's timeout rejects with an HTTPException; the studio's refusal rides in its cause.
  const deadline = timeout(
    timeoutMs,
    () =>
      new HTTPException(408, {
        cause: bodyFailure(`The body did not arrive within ${timeoutMs} ms.`, 408),
      }),
  );
  try {
    await deadline(c, async () => {
      await overLimit(c, async () => {
        text = await c.req.text();
      });
    });
  } catch (error) {
    if (clientGone(c)) throw wentAway();
    if (TroupeError.isInstance(error)) throw error;
    if (error instanceof HTTPException && TroupeError.isInstance(error.cause)) throw error.cause;
    throw wentAway();
  }
  // A client that left mid-body may leave a stream that just ends (which depends on when the close
  // was seen): what was read is not its body. A complete body is acted on even if its client left.
  if (clientGone(c) && c.env.incoming.complete !== true) throw wentAway();
  return parseJson(text);
}

/** A client gone before its body (a closed tab) is no failure of the studio's. */
const wentAway = () => bodyFailure('The client went away before its body arrived.', 400);

function clientGone(c: Context<StudioEnv>): boolean {
  return c.env?.incoming?.socket?.destroyed === true;
}

function parseJson(text: string): unknown {
  let prototypeKey = false;
  let value: unknown;
  try {
    value = JSON.parse(text, (key, v) => {
      if (key === '__proto__') prototypeKey = true;
      return v;
    });
  } catch {
    throw studioFailure(studioErrorCodes.badRequest, 'The body is not JSON.', 400);
  }
  if (prototypeKey)
    throw studioFailure(
      studioErrorCodes.badRequest,
      'The body has a “__proto__” key; no field has that name.',
      400,
    );
  return value;
}

/** The body as `schema` reads it, or a 400 naming each field that is not right. */
export function parseBody<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw studioFailure(
    studioErrorCodes.badRequest,
    `The body is not right: ${zodIssues(parsed.error, '(body)')}.`,
    400,
  );
}
