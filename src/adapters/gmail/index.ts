/**
 * Troupe's email assistant on Gmail and Google Calendar (googleapis 176): the `Mailbox` and
 * `Calendar` ports, and ingest by polling with a history-id cursor.
 *
 * @example
 * ```ts
 * const settings = gmailSettingsFromEnv(process.env);
 * const account = await openGmailAccount({ credentials: await readGmailCredentials(settings), store });
 * const assistant = new EmailAssistant({ store, mailbox: account.mailbox, calendar: account.calendar, clock, userName, timeZone });
 * await account.ingest.poll((email) => assistant.receive(email));          // one pass
 * await pollGmail({ ingest: account.ingest, onMessage: (e) => assistant.receive(e), everySeconds: 60, signal });
 * ```
 * @packageDocumentation
 */

export { type GmailAccount, type GmailAccountOptions, openGmailAccount } from './gmailAccount.js';
export {
  createGmailAuth,
  type GmailAuth,
  type GmailCredentials,
  GOOGLE_TOKEN_URL,
  readGmailCredentials,
} from './gmailAuth.js';
export {
  type GmailBacklog,
  GmailIngest,
  type GmailIngestOptions,
  type GmailPollResult,
  readGmailCursor,
} from './gmailIngest.js';
export { NOTIFY_LABEL, outcomeLabel } from './gmailLabels.js';
export { GmailMailbox, type GmailMailboxOptions, replyMessageId } from './gmailMailbox.js';
export { type GmailEmailInput, gmailMessageToInput, htmlToText } from './gmailMessage.js';
export {
  GMAIL_SCOPES,
  type InstalledAppFlowOptions,
  type InstalledAppGrant,
  runInstalledAppFlow,
} from './gmailOAuthFlow.js';
export { type GmailPollerEnd, type GmailPollerOptions, pollGmail } from './gmailPoller.js';
export {
  type GmailSettings,
  gmailConfigured,
  gmailFromEnv,
  gmailSettings,
  gmailSettingsFromEnv,
  type MarkReadPolicy,
} from './gmailSettings.js';
export { type GmailSyncStatus, readSyncStatus } from './gmailSyncStatus.js';
export { type SavedGmailToken, savedTokenPath, writeTokenFile } from './gmailTokenFile.js';
export { eventIdFor, GoogleCalendar, type GoogleCalendarOptions } from './googleCalendar.js';
export { googleError, NEW_REFRESH_TOKEN_HELP } from './googleError.js';
export { type GoogleCall, type GoogleRetryOptions, googleRetrying } from './googleRetry.js';
export { encodeHeaderWord, replyRaw, replySubject } from './replyMime.js';
