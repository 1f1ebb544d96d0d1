import { once } from 'node:events';
import type { Context } from 'hono';
import { type SSEStreamingApi, streamSSE } from 'hono/streaming';
import type { Logger } from '../logging/logger.js';
import type { StudioEnv } from './studioHttp.js';
import type { StudioState } from './studioState.js';
import type { StudioStore } from './studioStore.js';

/** The live stream sends at most one state per this many ms. */
const COALESCE_MS = 100;
/** A comment line keeps idle streams open through proxies. */
const PING_MS = 15_000;
/** How long closing waits for a stream's last bytes to leave before the sockets are cut. */
const END_GRACE_MS = 1_000;

/** The open live streams, so that closing the studio ends them first. */
export class LiveStreams {
  readonly #ends = new Set<() => Promise<void>>();

  /** `GET /api/events`: the current state, then each change, as Server-Sent Events (`event: state`). */
  open(c: Context<StudioEnv>, store: StudioStore, logger: Logger): Response {
    const { outgoing } = c.env;
    const response = streamSSE(
      c,
      async (stream) => {
        let stop = () => {};
        const stopped = new Promise<void>((resolve) => {
          stop = resolve;
        });
        const end = async () => {
          stop();
          await endedOrGrace(outgoing);
        };
        this.#ends.add(end);
        stream.onAbort(stop);
        const detach = sendStates(stream, store);
        await stopped;
        detach();
        this.#ends.delete(end);
      },
      async (error) => {
        logger.error({ err: error }, 'studio live stream failed');
      },
    );
    response.headers.set('Content-Type', 'text/event-stream; charset=utf-8');
    response.headers.set('Cache-Control', 'no-store');
    return response;
  }

  /** Ends every live stream; resolves once their last bytes are out (or after a grace period). */
  async endAll(): Promise<void> {
    await Promise.all([...this.#ends].map((end) => end()));
  }
}

async function endedOrGrace(outgoing: Context<StudioEnv>['env']['outgoing']): Promise<void> {
  // A client that stopped reading would hold the close for the whole grace period.
  if (outgoing.writableFinished || outgoing.destroyed || outgoing.writableNeedDrain) return;
  const grace = AbortSignal.timeout(END_GRACE_MS);
  await Promise.race([
    once(outgoing, 'close', { signal: grace }),
    once(outgoing, 'finish', { signal: grace }),
  ]).catch(() => undefined);
}

/**
 * Writes the store's state to `stream`: the current one now, then at most one per COALESCE_MS.
 * A client that stops reading gets nothing more until its last write is taken, then the newest
 * state only: each state is whole, so the ones in between need not be kept for it. Returns the
 * detach.
 */
function sendStates(stream: SSEStreamingApi, store: StudioStore): () => void {
  let blocked = false;
  let timer: NodeJS.Timeout | undefined;
  let sentAt = Date.now();
  let sentVersion = store.getSnapshot().context.version;
  const write = (text: string) => {
    blocked = true;
    void stream.write(text).then(() => {
      blocked = false;
      if (!timer) flush();
    });
  };
  const writeState = (state: StudioState) => write(`event: state\ndata: ${JSON.stringify(state)}\n\n`);
  const flush = () => {
    timer = undefined;
    const state = store.getSnapshot().context;
    if (blocked || state.version === sentVersion) return;
    sentVersion = state.version;
    sentAt = Date.now();
    writeState(state);
  };
  writeState(store.getSnapshot().context);
  const subscription = store.subscribe(() => {
    if (timer) return;
    timer = setTimeout(flush, Math.max(0, sentAt + COALESCE_MS - Date.now()));
  });
  const ping = setInterval(() => {
    if (!blocked) write(': ping\n\n');
  }, PING_MS);
  ping.unref();
  return () => {
    subscription.unsubscribe();
    clearInterval(ping);
    if (timer) clearTimeout(timer);
  };
}
