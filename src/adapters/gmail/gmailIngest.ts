import type { gmail_v1 } from 'googleapis/build/src/apis/gmail/v1.js';
import { type Logger, silentLogger } from '../../logging/logger.js';
import type { TroupeStore } from '../../ports/store.js';
import { TroupeError } from '../../ports/troupeError.js';
import { type GmailEmailInput, gmailMessageToInput } from './gmailMessage.js';
import type { GoogleCall } from './googleRetry.js';

const CURSORS = 'gmail-cursor';

/** What one pass over the mailbox did. */
export interface GmailPollResult {
  /** `full` on the first run or when Gmail no longer had the stored history; else `history`. */
  mode: 'full' | 'history';
  /** Messages handed to the callback in this pass (ids), oldest first. */
  handed: string[];
  /** Messages seen again and skipped (processed before). */
  skipped: number;
  /** The history id stored after the pass. */
  historyId: string;
}

/** How a {@link GmailIngest} is made. */
export interface GmailIngestOptions {
  gmail: gmail_v1.Gmail;
  address: string;
  store: TroupeStore;
  call: GoogleCall;
  /** The Gmail search of the full sync, with the INBOX label (default `newer_than:7d`; empty: all). */
  syncQuery?: string;
  /** The most messages a full sync reads (default 500). */
  maxFullSync?: number;
  /** Messages per page asked of Gmail (default 100). */
  pageSize?: number;
  logger?: Logger;
  now?: () => number;
}

/**
 * Reads new inbox mail from Gmail with a stored history-id cursor: `users.history.list`
 * (messageAdded, INBOX) from the cursor; on the first run, or when Gmail answers 404 because the
 * cursor is too old, a full sync of the inbox (`messages.list`) from the mailbox's current
 * history id. Each message is fetched whole and handed to the callback once: its id goes into
 * the store's processed-id set (scope `gmail:<address>`) after the callback returns, whether or
 * not it was read in Gmail. The cursor is stored only after the messages before it were handed
 * over, so a crash reads them again and the processed ids skip them.
 */
export class GmailIngest {
  private readonly log: Logger;
  private readonly scope: string;

  constructor(private readonly options: GmailIngestOptions) {
    this.log = options.logger ?? silentLogger();
    this.scope = `gmail:${options.address}`;
  }

  /** The stored cursor (Gmail history id), if any. */
  async cursor(): Promise<string | undefined> {
    return (await this.options.store.documents.get<{ historyId: string }>(CURSORS, this.options.address))
      ?.value.historyId;
  }

  /**
   * One pass: new messages to `onMessage` (the email assistant's `receive`), oldest first.
   * A callback that throws stops the pass before its message is marked, and the cursor stays.
   */
  async poll(onMessage: (input: GmailEmailInput) => Promise<unknown>): Promise<GmailPollResult> {
    const cursor = await this.cursor();
    if (cursor) {
      const result = await this.fromHistory(cursor, onMessage);
      if (result) return result;
      this.log.warn(
        { mailbox: this.options.address, historyId: cursor },
        'Gmail no longer has the stored history; reading the inbox again (messages seen before are skipped)',
      );
    }
    return this.fullSync(onMessage);
  }

  /** Reads history from `start`; `undefined` when Gmail says the cursor is too old (404). */
  private async fromHistory(
    start: string,
    onMessage: (input: GmailEmailInput) => Promise<unknown>,
  ): Promise<GmailPollResult | undefined> {
    const { gmail, call } = this.options;
    const result: GmailPollResult = { mode: 'history', handed: [], skipped: 0, historyId: start };
    let pageToken: string | undefined;
    do {
      let page: gmail_v1.Schema$ListHistoryResponse;
      try {
        page = (
          await call('read the mailbox history', () =>
            gmail.users.history.list({
              userId: 'me',
              startHistoryId: start,
              historyTypes: ['messageAdded'],
              labelId: 'INBOX',
              maxResults: this.options.pageSize ?? 100,
              ...(pageToken ? { pageToken } : {}),
            }),
          )
        ).data;
      } catch (error) {
        if (TroupeError.isInstance(error) && error.details?.status === 404 && result.handed.length === 0)
          return undefined;
        throw error;
      }
      const ids: string[] = [];
      for (const record of page.history ?? [])
        for (const added of record.messagesAdded ?? []) {
          const id = added.message?.id;
          if (id && !ids.includes(id)) ids.push(id);
        }
      await this.handOver(ids, onMessage, result);
      // Stored once the page's messages are handed over: a crash after this reads from here.
      const lastRecord = page.history?.at(-1)?.id;
      pageToken = page.nextPageToken ?? undefined;
      const reached = pageToken ? (lastRecord ?? undefined) : (page.historyId ?? lastRecord ?? undefined);
      if (reached) await this.saveCursor(reached, result);
    } while (pageToken);
    return result;
  }

  private async fullSync(onMessage: (input: GmailEmailInput) => Promise<unknown>): Promise<GmailPollResult> {
    const { gmail, call } = this.options;
    // The mailbox's history id before listing: mail arriving while the inbox is read is in the
    // history after it, so the next pass finds it.
    const profile = await call('read the mailbox profile', () => gmail.users.getProfile({ userId: 'me' }));
    const historyId = profile.data.historyId ?? undefined;
    const limit = this.options.maxFullSync ?? 500;
    const query = this.options.syncQuery ?? 'newer_than:7d';
    const ids: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = (
        await call('list the inbox', () =>
          gmail.users.messages.list({
            userId: 'me',
            labelIds: ['INBOX'],
            ...(query ? { q: query } : {}),
            maxResults: Math.min(this.options.pageSize ?? 100, limit - ids.length),
            ...(pageToken ? { pageToken } : {}),
          }),
        )
      ).data;
      for (const m of page.messages ?? []) if (m.id && !ids.includes(m.id)) ids.push(m.id);
      pageToken = page.nextPageToken ?? undefined;
    } while (pageToken && ids.length < limit);
    const result: GmailPollResult = { mode: 'full', handed: [], skipped: 0, historyId: historyId ?? '' };
    // Gmail lists newest first; the assistant gets them in the order they arrived.
    await this.handOver(ids.reverse(), onMessage, result);
    if (historyId) await this.saveCursor(historyId, result);
    return result;
  }

  private async handOver(
    ids: string[],
    onMessage: (input: GmailEmailInput) => Promise<unknown>,
    result: GmailPollResult,
  ): Promise<void> {
    const { gmail, call, store, address } = this.options;
    for (const id of ids) {
      if (await store.processed.isProcessed(this.scope, id)) {
        result.skipped += 1;
        continue;
      }
      let message: gmail_v1.Schema$Message;
      try {
        message = (
          await call(`read the email ${id}`, () =>
            gmail.users.messages.get({ userId: 'me', id, format: 'full' }),
          )
        ).data;
      } catch (error) {
        // Deleted between the listing and now: nothing to hand over.
        if (TroupeError.isInstance(error) && error.details?.status === 404) continue;
        throw error;
      }
      const labels = message.labelIds ?? [];
      // Only mail that arrived: drafts, and the account's own sent mail (the assistant's replies), are not.
      if (labels.includes('DRAFT') || (labels.includes('SENT') && !labels.includes('INBOX'))) {
        await store.processed.markProcessed(this.scope, id, this.now());
        continue;
      }
      await onMessage(gmailMessageToInput(message, address));
      await store.processed.markProcessed(this.scope, id, this.now());
      result.handed.push(id);
    }
  }

  private async saveCursor(historyId: string, result: GmailPollResult): Promise<void> {
    await this.options.store.documents.put(CURSORS, this.options.address, { historyId }, { at: this.now() });
    result.historyId = historyId;
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }
}
