import { type Logger, silentLogger } from '../../logging/logger.js';
import { describe, TroupeError } from '../../ports/troupeError.js';
import type { GmailIngest, GmailPollResult } from './gmailIngest.js';
import type { GmailEmailInput } from './gmailMessage.js';

/** How {@link pollGmail} runs. */
export interface GmailPollerOptions {
  ingest: Pick<GmailIngest, 'poll'>;
  onMessage: (input: GmailEmailInput) => Promise<unknown>;
  /** Seconds between passes. */
  everySeconds: number;
  /** Stops the loop (between passes, or during the wait). */
  signal?: AbortSignal;
  /** Each finished pass (awaited before the wait). */
  onPass?: (result: GmailPollResult) => void | Promise<void>;
  /** Waits between passes (tests pass a simulated one); resolves early when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  logger?: Logger;
}

/** Why a poll loop ended: stopped by its signal, or stopped by an error a person must fix. */
export type GmailPollerEnd = { stopped: 'signal' } | { stopped: 'auth'; error: TroupeError };

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Polls one mailbox until `signal` aborts. A pass that fails for a passing reason (Google
 * unavailable, the store away) is logged and the next pass tries again; a `TROUPE_GMAIL_AUTH`
 * (expired or revoked token) ends this loop with that error, and only this one: other mailboxes
 * and the runtime go on.
 */
export async function pollGmail(options: GmailPollerOptions): Promise<GmailPollerEnd> {
  const log = options.logger ?? silentLogger();
  const sleep = options.sleep ?? abortableSleep;
  while (!options.signal?.aborted) {
    try {
      // Awaited on its own line: `onPass?.(await …)` would skip the poll when there is no onPass.
      const result = await options.ingest.poll(options.onMessage);
      await options.onPass?.(result);
    } catch (error) {
      if (TroupeError.isInstance(error) && error.code === 'TROUPE_GMAIL_AUTH') {
        log.error({ err: error }, 'Gmail refused the credentials; this mailbox stops polling');
        return { stopped: 'auth', error };
      }
      log.warn({ err: error }, `a Gmail poll failed (${describe(error)}); trying again next time`);
    }
    if (options.signal?.aborted) break;
    await sleep(options.everySeconds * 1000, options.signal);
  }
  return { stopped: 'signal' };
}
