import { calendar_v3 } from 'googleapis/build/src/apis/calendar/index.js';
import { gmail_v1 } from 'googleapis/build/src/apis/gmail/index.js';
import { type Logger, silentLogger } from '../../logging/logger.js';
import type { TroupeStore } from '../../ports/store.js';
import { createGmailAuth, type GmailAuth, type GmailCredentials } from './gmailAuth.js';
import { GmailIngest } from './gmailIngest.js';
import { GmailMailbox } from './gmailMailbox.js';
import type { MarkReadPolicy } from './gmailSettings.js';
import { recordSyncFailure } from './gmailSyncStatus.js';
import { GoogleCalendar } from './googleCalendar.js';
import { type GoogleCall, type GoogleRetryOptions, googleRetrying } from './googleRetry.js';

/** How {@link openGmailAccount} connects. */
export interface GmailAccountOptions {
  credentials: GmailCredentials;
  store: TroupeStore;
  /** One base URL for Gmail and Calendar (a proxy, or a fake in tests); Google's own otherwise. */
  apiUrl?: string;
  /** The OAuth token endpoint (default Google's). */
  tokenUrl?: string;
  /** The Gmail search of the first run's full sync (default `newer_than:7d`). */
  syncQuery?: string;
  /** When closing an email marks it read (default `answered`). */
  markRead?: MarkReadPolicy;
  retry?: GoogleRetryOptions;
  logger?: Logger;
  now?: () => number;
}

/** One Gmail account: its mailbox, calendar and ingest, sharing one OAuth client. */
export interface GmailAccount {
  /** The account's address, from Gmail's profile. */
  address: string;
  mailbox: GmailMailbox;
  calendar: GoogleCalendar;
  ingest: GmailIngest;
  auth: GmailAuth;
  call: GoogleCall;
}

/**
 * Connects to one Gmail account with the real googleapis clients and reads its address
 * (`users.getProfile`), so bad credentials fail here, as `TROUPE_GMAIL_AUTH` (also kept in the
 * store's sync status).
 */
export async function openGmailAccount(options: GmailAccountOptions): Promise<GmailAccount> {
  const logger = options.logger ?? silentLogger();
  const auth = createGmailAuth(options.credentials, {
    ...(options.tokenUrl ? { tokenUrl: options.tokenUrl } : {}),
    logger,
  });
  const call = googleRetrying({ ...options.retry, tokenUrl: auth.tokenUrl, logger });
  // googleapis retries by itself without honouring Retry-After: turned off, `call` retries instead.
  const common = { auth: auth.client, retry: false, ...(options.apiUrl ? { rootUrl: options.apiUrl } : {}) };
  const gmail = new gmail_v1.Gmail(common);
  const calendar = new calendar_v3.Calendar(common);
  const now = options.now ?? Date.now;
  let profile: gmail_v1.Schema$Profile;
  try {
    profile = (await call('read the mailbox profile', () => gmail.users.getProfile({ userId: 'me' }))).data;
  } catch (error) {
    // Kept for `troupe email --status`: a refused grant shows there, with when it happened.
    await recordSyncFailure(options.store.documents, undefined, error, now()).catch(() => undefined);
    throw error;
  }
  const address = profile.emailAddress ?? 'me';
  return {
    address,
    auth,
    call,
    mailbox: new GmailMailbox({
      gmail,
      address,
      documents: options.store.documents,
      call,
      ...(options.markRead ? { markRead: options.markRead } : {}),
      logger,
      now,
    }),
    calendar: new GoogleCalendar({ calendar, call }),
    ingest: new GmailIngest({
      gmail,
      address,
      store: options.store,
      call,
      ...(options.syncQuery !== undefined ? { syncQuery: options.syncQuery } : {}),
      logger,
      now,
    }),
  };
}
