import { timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { bearerAuth } from 'hono/bearer-auth';
import { studioErrorCodes } from '../ports/errorCodes.js';
import { errorAnswer, type StudioEnv, studioFailure } from './studioHttp.js';

const unauthorized = () =>
  errorAnswer(
    studioFailure(
      studioErrorCodes.unauthorized,
      'This needs the studio token: open the URL troupe studio printed (the token follows #token=).',
      401,
    ),
  );

/**
 * The studio token's check on every `/api` route: `Authorization: Bearer <token>`. Any refusal (no
 * header, another scheme, a malformed or wrong token) is the same 401 with the studio's error body.
 */
export function studioTokenAuth(token: string): MiddlewareHandler<StudioEnv> {
  return bearerAuth({
    token,
    noAuthenticationHeader: { message: unauthorized },
    invalidAuthenticationHeader: { message: unauthorized },
    invalidToken: { message: unauthorized },
  });
}

/**
 * The check for the live stream, which `EventSource` opens without headers: a Bearer header if one
 * is given, else `?token=`. No other route takes the token from the URL.
 */
export function studioStreamAuth(token: string): MiddlewareHandler<StudioEnv> {
  const expected = Buffer.from(token);
  const byHeader = studioTokenAuth(token);
  return async (c, next) => {
    const fromUrl = c.req.query('token');
    if (/^bearer /iu.test(c.req.header('authorization') ?? '') || fromUrl === undefined)
      return byHeader(c, next);
    const given = Buffer.from(fromUrl);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return unauthorized();
    await next();
  };
}

/** The token check of every `/api` route: the live stream's rule on `GET /api/events`, the header elsewhere. */
export function studioApiAuth(token: string): MiddlewareHandler<StudioEnv> {
  const byHeader = studioTokenAuth(token);
  const forStream = studioStreamAuth(token);
  return (c, next) =>
    c.req.method === 'GET' && c.req.path === '/api/events' ? forStream(c, next) : byHeader(c, next);
}
