import type { gmail_v1 } from 'googleapis/build/src/apis/gmail/v1.js';
import { type Logger, silentLogger } from '../../logging/logger.js';
import type { TroupeStore } from '../../ports/store.js';
import { TroupeError } from '../../ports/troupeError.js';
import { type GmailEmailInput, gmailMessageToInput } from './gmailMessage.js';
import { recordSyncFailure, recordSyncSuccess } from './gmailSyncStatus.js';
import type { GoogleCall } from './googleRetry.js';

const CURSORS = 'gmail-cursor';
/** A resync reads from this long before the cursor was last stored (clock skew, late delivery). */
const RESYNC_MARGIN_MS = 24 * 3_600_000;

/** The history id the ingest of `address` stored last, if any (read without connecting). */
export async function readGmailCursor(
  documents: TroupeStore['documents'],
  address: string,
): Promise<string | undefined> {
  const stored = await documents.get<{ historyId?: unknown }>(CURSORS, address);
  return typeof stored?.value.historyId === 'string' ? stored.value.historyId : undefined;
}

/** Which messages a full read of the inbox lists. */
interface FullSyncPlan {
  mode: 'full' | 'resync';
  query: string;
  limit: number;
}

/** How far the cursor is behind the mailbox, for `troupe email --status`. */
export type GmailBacklog =
  | { state: 'no-cursor' }
  | { state: 'too-old'; cursor: string }
  | {
      state: 'known';
      cursor: string;
      /** Inbox messages added since the cursor and not handed over yet. */
      count: number;
      /** True when there were more than were looked at (`count` is then a lower bound). */
      more: boolean;
      /** The mailbox's own history id now. */
      mailboxHistoryId?: string;
    };

/** What one pass over the mailbox did. */
export interface GmailPollResult {
  /**
   * `full` on the first run; `resync` when Gmail no longer had the stored history (404) and the
   * inbox was read again from shortly before the cursor was stored; else `history`.
   */
  mode: 'full' | 'history' | 'resync';
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
  /** The most messages a resync after a 404 reads (default 2000). */
  maxResync?: number;
  /** Messages per page asked of Gmail (default 100). */
  pageSize?: number;
  logger?: Logger;
  now?: () => number;
}

/**
 * Reads new inbox mail from Gmail with a stored history-id cursor: `users.history.list`
 * (messageAdded, INBOX) from the cursor. On the first run, a full sync of the inbox
 * (`messages.list` with the sync query); when Gmail answers 404 because the cursor is too old, a
 * resync: the inbox messages received since a day before the cursor was last stored (`after:`),
 * so mail that arrived in the gap is read whatever the sync query; both from the mailbox's
 * current history id. Each pass's outcome (or failure) is kept in the store's sync status
 * ({@link readSyncStatus}). Each message is fetched whole and handed to the callback once: its id goes into
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
    return (await this.cursorDocument())?.value.historyId;
  }

  private cursorDocument() {
    return this.options.store.documents.get<{ historyId: string }>(CURSORS, this.options.address);
  }

  /**
   * One pass: new messages to `onMessage` (the email assistant's `receive`), oldest first.
   * A callback that throws stops the pass before its message is marked, and the cursor stays.
   * The pass's outcome, or its failure, goes into the sync status.
   */
  async poll(onMessage: (input: GmailEmailInput) => Promise<unknown>): Promise<GmailPollResult> {
    const { documents } = this.options.store;
    try {
      const result = await this.pass(onMessage);
      await recordSyncSuccess(
        documents,
        this.options.address,
        { ...result, handed: result.handed.length },
        this.now(),
      );
      return result;
    } catch (error) {
      await recordSyncFailure(documents, this.options.address, error, this.now()).catch((e: unknown) =>
        this.log.warn({ err: e }, 'could not record the Gmail sync failure'),
      );
      throw error;
    }
  }

  private async pass(onMessage: (input: GmailEmailInput) => Promise<unknown>): Promise<GmailPollResult> {
    const cursor = await this.cursorDocument();
    if (!cursor)
      return this.fullSync(onMessage, {
        mode: 'full',
        query: this.options.syncQuery ?? 'newer_than:7d',
        limit: this.options.maxFullSync ?? 500,
      });
    const result = await this.fromHistory(cursor.value.historyId, onMessage);
    if (result) return result;
    // Everything received since shortly before the cursor was stored: the gap, whatever its age.
    const after = Math.max(0, Math.floor((cursor.updatedAt - RESYNC_MARGIN_MS) / 1000));
    this.log.warn(
      { mailbox: this.options.address, historyId: cursor.value.historyId, after },
      'Gmail no longer has the stored history; reading the inbox again from before the cursor (messages seen before are skipped)',
    );
    return this.fullSync(onMessage, {
      mode: 'resync',
      query: `after:${after}`,
      limit: this.options.maxResync ?? 2000,
    });
  }

  /**
   * How many inbox messages arrived since the cursor and were not handed over yet: the history
   * from the cursor, read without handing anything over (at most `limit` messages looked at).
   */
  async behind(limit = 1000): Promise<GmailBacklog> {
    const cursor = await this.cursor();
    if (!cursor) return { state: 'no-cursor' };
    const { store } = this.options;
    const ids = new Set<string>();
    let pageToken: string | undefined;
    let mailboxHistoryId: string | undefined;
    do {
      const page = await this.historyPage(cursor, pageToken, 500);
      if (!page) return { state: 'too-old', cursor };
      mailboxHistoryId = page.historyId ?? mailboxHistoryId;
      for (const record of page.history ?? [])
        for (const added of record.messagesAdded ?? []) if (added.message?.id) ids.add(added.message.id);
      pageToken = page.nextPageToken ?? undefined;
    } while (pageToken && ids.size < limit);
    let count = 0;
    for (const id of ids) if (!(await store.processed.isProcessed(this.scope, id))) count += 1;
    return {
      state: 'known',
      cursor,
      count,
      more: pageToken !== undefined,
      ...(mailboxHistoryId ? { mailboxHistoryId } : {}),
    };
  }

  /** One page of the inbox's added messages since `start`; `undefined` when Gmail says it is too old (404). */
  private async historyPage(
    start: string,
    pageToken: string | undefined,
    maxResults: number,
  ): Promise<gmail_v1.Schema$ListHistoryResponse | undefined> {
    const { gmail, call } = this.options;
    try {
      const response = await call('read the mailbox history', () =>
        gmail.users.history.list({
          userId: 'me',
          startHistoryId: start,
          historyTypes: ['messageAdded'],
          labelId: 'INBOX',
          maxResults,
          ...(pageToken ? { pageToken } : {}),
        }),
      );
      return response.data;
    } catch (error) {
      if (TroupeError.isInstance(error) && error.details?.status === 404) return undefined;
      throw error;
    }
  }

  /** Reads history from `start`; `undefined` when Gmail says the cursor is too old (404). */
  private async fromHistory(
    start: string,
    onMessage: (input: GmailEmailInput) => Promise<unknown>,
  ): Promise<GmailPollResult | undefined> {
    const result: GmailPollResult = { mode: 'history', handed: [], skipped: 0, historyId: start };
    let pageToken: string | undefined;
    do {
      const page = await this.historyPage(start, pageToken, this.options.pageSize ?? 100);
      // Too old: the whole inbox is read instead, unless this pass already handed messages over.
      if (!page) {
        if (result.handed.length === 0) return undefined;
        throw new TroupeError(
          'TROUPE_GMAIL_FAILED',
          'Gmail stopped finding the mailbox history half-way through a pass; the next pass reads it again.',
          { retryable: true },
        );
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

  private async fullSync(
    onMessage: (input: GmailEmailInput) => Promise<unknown>,
    plan: FullSyncPlan,
  ): Promise<GmailPollResult> {
    const { gmail, call } = this.options;
    // The mailbox's history id before listing: mail arriving while the inbox is read is in the
    // history after it, so the next pass finds it.
    const profile = await call('read the mailbox profile', () => gmail.users.getProfile({ userId: 'me' }));
    const historyId = profile.data.historyId ?? undefined;
    const ids: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = (
        await call('list the inbox', () =>
          gmail.users.messages.list({
            userId: 'me',
            labelIds: ['INBOX'],
            ...(plan.query ? { q: plan.query } : {}),
            maxResults: Math.min(this.options.pageSize ?? 100, plan.limit - ids.length),
            ...(pageToken ? { pageToken } : {}),
          }),
        )
      ).data;
      for (const m of page.messages ?? []) if (m.id && !ids.includes(m.id)) ids.push(m.id);
      pageToken = page.nextPageToken ?? undefined;
    } while (pageToken && ids.length < plan.limit);
    if (pageToken)
      this.log.warn(
        { mailbox: this.options.address, mode: plan.mode, limit: plan.limit, query: plan.query },
        'the inbox held more messages than one full read takes; the oldest of them were not read',
      );
    const result: GmailPollResult = { mode: plan.mode, handed: [], skipped: 0, historyId: historyId ?? '' };
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
