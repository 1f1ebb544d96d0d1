import { z } from 'zod';
import type { GmailAccount } from '../adapters/gmail/gmailAccount.js';
import type { GmailBacklog } from '../adapters/gmail/gmailIngest.js';
import { openDefaultStore } from '../adapters/store/storeFromEnv.js';
import { terminalText } from '../delivery/terminalText.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { logLevelFromEnv } from '../logging/logLevel.js';
import type { DocumentStore, TroupeStore } from '../ports/store.js';
import { describe, isTroupeError } from '../ports/troupeError.js';
import { fail } from './fail.js';
import { openGmail } from './openEmailAssistant.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Where the email assistant keeps its records (one per email). */
const EMAILS = 'email-lifecycle';

const failedRecordSchema = z.object({
  email: z.object({ id: z.string(), subject: z.string().optional(), from: z.string().optional() }),
  state: z.object({
    value: z.literal('failed'),
    context: z.object({ error: z.object({ code: z.string(), message: z.string() }).nullable().optional() }),
  }),
});

/** An email that ended `failed`, with the reason its record keeps. */
export interface FailedEmail {
  id: string;
  subject: string;
  from: string;
  reason?: { code: string; message: string };
}

/** The emails whose records ended `failed`, read from the store page by page. */
export async function failedEmails(documents: DocumentStore): Promise<FailedEmail[]> {
  const failed: FailedEmail[] = [];
  let afterKey: string | undefined;
  for (;;) {
    const page = await documents.list(EMAILS, { limit: 500, ...(afterKey ? { afterKey } : {}) });
    for (const doc of page) {
      const parsed = failedRecordSchema.safeParse(doc.value);
      if (!parsed.success) continue;
      const { email, state } = parsed.data;
      failed.push({
        id: email.id,
        subject: email.subject ?? '',
        from: email.from ?? '',
        ...(state.context.error ? { reason: state.context.error } : {}),
      });
    }
    if (page.length < 500) return failed;
    afterKey = page.at(-1)?.key;
  }
}

const time = (ms: number) => new Date(ms).toISOString();

function backlogLine(backlog: GmailBacklog): string {
  if (backlog.state === 'no-cursor') return 'none read yet: the first pass reads the inbox';
  if (backlog.state === 'too-old')
    return 'unknown: Gmail no longer has the history from the cursor; the next pass reads the inbox again from before it';
  const count = `${backlog.count}${backlog.more ? '+' : ''}`;
  return `${count} new in the inbox since the cursor${backlog.mailboxHistoryId ? ` (the mailbox is at history id ${backlog.mailboxHistoryId})` : ''}`;
}

/** The Gmail account of the environment, or why it could not be opened (also kept in the sync status). */
async function connect(
  env: Env,
  store: TroupeStore,
  logger: Logger,
): Promise<{ account?: GmailAccount | undefined; problem?: string; configured: boolean }> {
  const { gmailConfigured } = await import('../adapters/gmail/gmailSettings.js');
  if (!gmailConfigured(env)) return { configured: false };
  try {
    const { account } = (await openGmail(env, store, logger, statusClock(env).now ?? Date.now)) ?? {};
    return { account, configured: true };
  } catch (error) {
    if (!isTroupeError(error)) throw error;
    return { problem: `${error.code}: ${error.message}`, configured: true };
  }
}

/** The clock the status records failures with: TROUPE_EMAIL_NOW when it pins one, as `troupe email` does. */
function statusClock(env: Env): { now?: () => number } {
  const pinned = Date.parse(env.TROUPE_EMAIL_NOW?.trim() ?? '');
  return Number.isFinite(pinned) ? { now: () => pinned } : {};
}

/** The Gmail part of the status: the last sync, the cursor, how far behind, the last error. */
async function gmailLines(env: Env, store: TroupeStore, logger: Logger): Promise<string[]> {
  const { readSyncStatus } = await import('../adapters/gmail/gmailSyncStatus.js');
  const { readGmailCursor } = await import('../adapters/gmail/gmailIngest.js');
  const { account, problem, configured } = await connect(env, store, logger);
  try {
    const status = await readSyncStatus(store.documents);
    const address = account?.address ?? status?.address;
    if (!configured && !status)
      return [
        'Gmail: not set up (run `troupe gmail auth`, or set GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET and GOOGLE_REFRESH_TOKEN; see docs/email.md).',
      ];
    const lines = [`Gmail: ${address ?? '(account not known yet)'}${configured ? '' : ' (not set up now)'}`];
    const pass = status?.lastPass;
    lines.push(
      `  last successful sync: ${status?.lastSuccessAt === undefined ? 'never' : `${time(status.lastSuccessAt)}${pass ? ` (${pass.mode}: ${pass.handed} new, ${pass.skipped} seen before)` : ''}`}`,
    );
    if (status?.lastResyncAt !== undefined)
      lines.push(`  last resync (Gmail had dropped the history): ${time(status.lastResyncAt)}`);
    const cursor = address ? await readGmailCursor(store.documents, address) : undefined;
    lines.push(`  cursor (history id): ${cursor ?? 'none yet'}`);
    let behind: string;
    if (account) {
      try {
        behind = backlogLine(await account.ingest.behind());
      } catch (error) {
        behind = `unknown (${isTroupeError(error) ? `${error.code}: ${error.message}` : describe(error)})`;
      }
    } else behind = `unknown (could not connect${problem ? `: ${problem}` : ''})`;
    lines.push(`  messages behind: ${behind}`);
    const error = status?.lastError;
    const since = error && status?.lastSuccessAt !== undefined && status.lastSuccessAt > error.at;
    lines.push(
      `  last error: ${error ? `${time(error.at)} ${error.code}: ${error.message}${since ? ' (a later sync went through)' : ''}` : 'none'}`,
    );
    return lines;
  } finally {
    await account?.auth.flush();
  }
}

/**
 * `troupe email --status`: how the Gmail sync stands (the last successful sync, the cursor, how
 * many messages it is behind, the last error) and the emails that ended failed, with why.
 * A Gmail account it cannot open (refused credentials, a bad setting) is shown in the status.
 * Exit 0 when the status could be read, 2 when the store could not be opened or LOG_LEVEL is bad.
 */
export async function runEmailStatus(options: {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Env;
}): Promise<number> {
  let logger: Logger;
  try {
    logger = createLogger({ level: logLevelFromEnv(options.env, 'warn') });
  } catch (error) {
    if (!isTroupeError(error)) throw error;
    return fail(options.stderr, error.code, error.message);
  }
  let store: TroupeStore;
  try {
    store = await openDefaultStore(options.env, { logger });
  } catch (error) {
    if (isTroupeError(error)) return fail(options.stderr, error.code, error.message);
    throw error;
  }
  const out = (line: string) => options.stdout(`${terminalText(line)}\n`);
  try {
    for (const line of await gmailLines(options.env, store, logger)) out(line);
    const failed = await failedEmails(store.documents);
    out(failed.length === 0 ? 'Failed emails: none' : `Failed emails (${failed.length}):`);
    for (const email of failed)
      out(
        `  ${email.id} “${email.subject.replace(/\s+/gu, ' ').slice(0, 70)}” from ${email.from} — ${email.reason ? `${email.reason.code}: ${email.reason.message}` : 'no reason kept'}`,
      );
    return 0;
  } catch (error) {
    if (isTroupeError(error)) return fail(options.stderr, error.code, error.message);
    throw error;
  } finally {
    await store.close();
  }
}
