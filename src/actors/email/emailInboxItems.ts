import {
  type InterruptConfig,
  type InterruptRequest,
  NOTIFY_ACTION,
  notifyConfig,
  type ReviewedTool,
  reviewedTools,
} from '../../email/agentInbox.js';
import { emailHeading } from '../../email/emailMarkdown.js';
import { isReviewed } from '../../email/responseTools.js';
import type { DocumentStore } from '../../ports/store.js';
import { TroupeError } from '../../ports/troupeError.js';
import { ANSWERED_BEFORE } from './emailPreviousFormat.js';
import {
  type AnsweredInterrupt,
  EMAILS,
  type EmailRecord,
  type FailedEmail,
  INBOX,
  type InboxItem,
  isIn,
} from './emailRecord.js';
import { readRecord } from './emailRecordCompaction.js';

/** The answer the record holds to one of its interrupts, if it was answered. */
export function answerTo(record: EmailRecord, interruptId: string): AnsweredInterrupt | undefined {
  const prefix = `${record.email.id}#`;
  if (!record.answered || !interruptId.startsWith(prefix)) return undefined;
  // Only the id as raised (`#1`, not `#01`, `# 1` or `#1e0`, which Number() reads as 1 too).
  const suffix = interruptId.slice(prefix.length);
  return record.answered.find((entry) => String(entry.n) === suffix);
}

/**
 * An answered interrupt as the inbox shows it: its request written out again from the email
 * (heading and headers; the body stays in the mailbox) and the call's arguments.
 */
export function inboxItemOf(record: EmailRecord, entry: AnsweredInterrupt): InboxItem {
  const { email } = record;
  const args =
    entry.args ??
    (entry.step === undefined || entry.action === NOTIFY_ACTION
      ? undefined
      : record.steps[entry.step]?.call.args) ??
    {};
  // As notifyInterrupt() and toolInterrupt() asked it, less the body and the proposal written out.
  const config: InterruptConfig =
    entry.action === NOTIFY_ACTION
      ? { ...notifyConfig }
      : entry.action in reviewedTools
        ? { ...reviewedTools[entry.action as ReviewedTool] }
        : { allow_ignore: false, allow_respond: false, allow_edit: false, allow_accept: false };
  return {
    id: `${email.id}#${entry.n}`,
    emailId: email.id,
    request: {
      action_request: { action: entry.action, args: args as Record<string, unknown> },
      config,
      description: emailHeading(email),
    },
    status: 'answered',
    answer: entry.answer,
    createdAt: entry.createdAt,
    answeredAt: entry.answeredAt,
    ...(entry.memory ? { memory: entry.memory } : {}),
  };
}

/** The emails that failed, with why (the error's code and message), most recent first. */
export async function failedEmails(documents: DocumentStore): Promise<FailedEmail[]> {
  const records = await documents.list<EmailRecord>(EMAILS);
  const out: FailedEmail[] = [];
  for (const doc of records) {
    if (doc.value.state.value !== 'failed') continue;
    const record = readRecord(doc.value, doc.version);
    const { error, now } = record.state.context;
    out.push({
      emailId: record.email.id,
      from: record.email.from,
      subject: record.email.subject,
      failedAt: now,
      error: error ?? { code: 'TROUPE_EMAIL_FAILED', message: 'No reason was recorded.' },
    });
  }
  return out.sort((a, b) => b.failedAt - a.failedAt);
}

/** The interrupts waiting for the human, oldest first. */
export async function pendingItems(documents: DocumentStore): Promise<InboxItem[]> {
  const items = await documents.list<InboxItem>(INBOX);
  return items.map((d) => d.value).sort((a, b) => a.createdAt - b.createdAt);
}

/**
 * One interrupt of the inbox, pending or answered (with how it was answered, and its request as
 * it was shown, without the email's body).
 */
export async function inboxItem(
  documents: DocumentStore,
  interruptId: string,
): Promise<InboxItem | undefined> {
  const answered = await answeredItem(documents, interruptId);
  if (answered) return answered;
  return (
    (await documents.get<InboxItem>(INBOX, interruptId))?.value ??
    (await documents.get<InboxItem>(ANSWERED_BEFORE, interruptId))?.value
  );
}

/** An answered interrupt as an inbox item, from its email's record. */
async function answeredItem(documents: DocumentStore, interruptId: string): Promise<InboxItem | undefined> {
  const hash = interruptId.lastIndexOf('#');
  if (hash <= 0) return undefined;
  const stored = await documents.get<EmailRecord>(EMAILS, interruptId.slice(0, hash));
  const record = stored ? readRecord(stored.value, stored.version) : undefined;
  const entry = record ? answerTo(record, interruptId) : undefined;
  return record && entry ? inboxItemOf(record, entry) : undefined;
}

/**
 * What the email waits on, as the interrupt asked it: written out from the record (the call it
 * proposed), or read from the inbox when the record does not say (a store of an earlier build).
 */
export async function waitingOn(
  documents: DocumentStore,
  record: EmailRecord,
  interruptId: string,
): Promise<InterruptRequest> {
  const value = record.state.value;
  const description = '';
  if (isIn(value, 'notifying'))
    return {
      action_request: { action: NOTIFY_ACTION, args: {} },
      config: { ...notifyConfig },
      description,
    };
  const call = record.proposed;
  if (isIn(value, 'responding', 'reviewing') && call && isReviewed(call.tool))
    return {
      action_request: { action: call.tool, args: call.args as Record<string, unknown> },
      config: { ...reviewedTools[call.tool as ReviewedTool] },
      description,
    };
  const shown = await documents.get<InboxItem>(INBOX, interruptId);
  if (!shown) throw new TroupeError('TROUPE_INBOX_INVALID', `No interrupt ${interruptId} in the inbox.`);
  return shown.value.request;
}
