import type { HttpBindings } from '@hono/node-server';
import { studioErrorCodes, type TroupeErrorCode } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';

/** What every studio handler sees: hono's context over node's request and response. */
export interface StudioEnv {
  Bindings: HttpBindings;
}

/** A refusal whose `details.status` is the HTTP status it is answered with. */
export const studioFailure = (code: TroupeErrorCode, message: string, status: number): TroupeError =>
  new TroupeError(code, message, { details: { status } });

/** A refused body: the rest of it is not read, so the connection closes after the answer. */
export const bodyFailure = (message: string, status: number): TroupeError =>
  new TroupeError(studioErrorCodes.badRequest, message, { details: { status, closeConnection: true } });

/** How an answer is sent: API answers are never cached; `close` ends the connection after it. */
export interface AnswerOptions {
  api?: boolean;
  close?: boolean;
}

/** A JSON answer (the security headers are added by the middleware around every route). */
export function jsonAnswer(
  status: number,
  body: unknown,
  { api = true, close = false }: AnswerOptions = {},
): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      ...(api ? { 'Cache-Control': 'no-store' } : {}),
      // Node ends the socket once this answer is out, instead of reading a body nobody wants.
      ...(close ? { Connection: 'close' } : {}),
    },
  });
}

/** A TroupeError as the studio answers it: `{ error: { code, message } }` at its `details.status`. */
export function errorAnswer(error: TroupeError, { api = true }: AnswerOptions = {}): Response {
  const status = typeof error.details?.status === 'number' ? error.details.status : 400;
  const close = error.details?.closeConnection === true;
  return jsonAnswer(status, { error: { code: error.code, message: error.message } }, { api, close });
}

/** The request's path as it was sent (percent-encoded), for messages and for ids in the path. */
export const sentPathname = (url: string): string => new URL(url).pathname;
