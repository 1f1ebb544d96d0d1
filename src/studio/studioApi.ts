import { type Context, Hono } from 'hono';
import { z } from 'zod';
import { humanResponseSchema } from '../email/agentInbox.js';
import type { Logger } from '../logging/logger.js';
import { studioErrorCodes } from '../ports/errorCodes.js';
import { parseBody, readJsonBody } from './studioBody.js';
import type { StudioChart } from './studioCharts.js';
import { jsonAnswer, type StudioEnv, sentPathname, studioFailure } from './studioHttp.js';
import type { LiveStreams } from './studioLiveStream.js';
import type { StudioStore } from './studioStore.js';
import { studioApiAuth } from './studioToken.js';

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
  /**
   * Summons the avatar called `name`, creating it when nobody has that name (and the runtime's
   * creation is on); resolves with who was summoned and whether it is new.
   */
  create(name: string): Promise<{ avatar: { id: string; name: string; emoji?: string }; created: boolean }>;
}

/** What the API routes read and call. */
export interface StudioApiOptions {
  store: StudioStore;
  token: string;
  actions: StudioActions;
  /** The charts, rendered on the first request and kept. */
  charts: () => Promise<StudioChart[]>;
  /** Read before the state is answered or streamed (never failing; see `serveStudio`). */
  refresh?: () => Promise<void>;
  streams: LiveStreams;
  logger: Logger;
  bodyTimeoutMs: number;
}

const messageBody = z.strictObject({
  text: z.string().trim().min(1, 'text is empty').max(4_000),
  replyTo: z.string().min(1).max(200).optional(),
});
const avatarBody = z.strictObject({ avatarId: z.string().min(1).max(100) });
const newAvatarBody = z.strictObject({ name: z.string().min(1).max(100) });

/**
 * The id in `/api/<kind>/<id>/…` as the client encoded it, decoded once; an id that is not
 * percent-encoded right names nothing (404).
 */
function idInPath(c: Context<StudioEnv>, missing: string): string {
  const encoded = sentPathname(c.req.url).split('/')[3] ?? '';
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw studioFailure(studioErrorCodes.notFound, missing, 404);
  }
}

/** The JSON API under `/api`: every route needs the studio token (see `studioApiAuth`). */
export function studioApi(options: StudioApiOptions): Hono<StudioEnv> {
  const { store, actions, logger, bodyTimeoutMs } = options;
  let charts: Promise<StudioChart[]> | undefined;
  const api = new Hono<StudioEnv>();
  api.use('*', studioApiAuth(options.token));
  const refresh = options.refresh ?? (async () => {});
  api.get('/state', async () => {
    await refresh();
    return jsonAnswer(200, store.getSnapshot().context);
  });
  api.get('/events', async (c) => {
    await refresh();
    return options.streams.open(c, store, logger);
  });
  api.get('/avatars', () => jsonAnswer(200, { avatars: store.getSnapshot().context.playground.avatars }));
  api.get('/charts', async () => {
    charts ??= options.charts();
    return jsonAnswer(200, { charts: await charts });
  });
  api.post('/inbox/:id/answer', async (c) => {
    const id = idInPath(c, 'No interrupt with that id.');
    const body = parseBody(humanResponseSchema, await readJsonBody(c, bodyTimeoutMs));
    return jsonAnswer(200, await actions.answer(id, body));
  });
  api.post('/email/:id/retry', async (c) =>
    jsonAnswer(200, await actions.retry(idInPath(c, 'No email with that id.'))),
  );
  api.post('/playground/message', async (c) => {
    const body = parseBody(messageBody, await readJsonBody(c, bodyTimeoutMs));
    return jsonAnswer(
      202,
      actions.post(body.replyTo ? { text: body.text, replyTo: body.replyTo } : { text: body.text }),
    );
  });
  api.post('/playground/summon', async (c) => {
    actions.summon(parseBody(avatarBody, await readJsonBody(c, bodyTimeoutMs)).avatarId);
    return jsonAnswer(202, { ok: true });
  });
  api.post('/playground/create', async (c) => {
    const { name } = parseBody(newAvatarBody, await readJsonBody(c, bodyTimeoutMs));
    return jsonAnswer(202, await actions.create(name));
  });
  api.post('/playground/dismiss', async (c) => {
    actions.dismiss(parseBody(avatarBody, await readJsonBody(c, bodyTimeoutMs)).avatarId);
    return jsonAnswer(202, { ok: true });
  });
  return api;
}
