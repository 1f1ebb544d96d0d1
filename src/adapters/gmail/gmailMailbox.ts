import { createHash } from 'node:crypto';
import type { gmail_v1 } from 'googleapis/build/src/apis/gmail/v1.js';
import type { Logger } from '../../logging/logger.js';
import type { CloseContext, EmailReply, Mailbox } from '../../ports/mailbox.js';
import type { DocumentStore } from '../../ports/store.js';
import { TroupeError } from '../../ports/troupeError.js';
import { GmailLabels, NOTIFY_LABEL, outcomeLabel } from './gmailLabels.js';
import type { MarkReadPolicy } from './gmailSettings.js';
import type { GoogleCall } from './googleRetry.js';
import { replyRaw } from './replyMime.js';

const SENT = 'gmail-sent';

/** What the Gmail mailbox records per idempotency key once a reply is out. */
interface SentRecord {
  messageId: string;
  gmailId: string;
  threadId?: string;
}

/** How a {@link GmailMailbox} is made. */
export interface GmailMailboxOptions {
  gmail: gmail_v1.Gmail;
  /** The account's address (the From of replies, and the store's scope). */
  address: string;
  documents: DocumentStore;
  call: GoogleCall;
  /** When closing removes UNREAD (default `answered`: only when a person saw the email). */
  markRead?: MarkReadPolicy;
  logger?: Logger;
  now?: () => number;
}

/**
 * The Message-ID a reply with this key gets, the same in every process and after a restart:
 * `<troupe.<hash of account and key>@<the account's domain>>`.
 */
export function replyMessageId(address: string, key: string): string {
  const hash = createHash('sha256').update(`${address}\n${key}`).digest('hex').slice(0, 32);
  const domain = /@([^>\s]+)/u.exec(address)?.[1] ?? 'troupe.local';
  return `<troupe.${hash}@${domain}>`;
}

/**
 * The {@link Mailbox} port over Gmail: replies go out in their thread (`threadId`, In-Reply-To,
 * References, one `Re:`), and `close` labels an email with its outcome ({@link outcomeLabel}) and
 * marks it read as `markRead` says: by default only when a person saw it (answered its interrupt,
 * or a reply went out), so a misclassified email stays in Unread.
 *
 * Nothing is sent twice: each reply's Message-ID comes from its idempotency key. Before sending,
 * the mailbox looks in its own record, then in Gmail's sent mail (`rfc822msgid:`), so a resend
 * after a crash between the send and the record (or after a send Gmail carried out but answered
 * with an error) finds the first and returns it as `duplicate: true`.
 */
export class GmailMailbox implements Mailbox {
  readonly id: string;
  private readonly labels: GmailLabels;

  constructor(private readonly options: GmailMailboxOptions) {
    this.id = `gmail:${options.address}`;
    this.labels = new GmailLabels(options.gmail, options.call);
  }

  async sendReply(reply: EmailReply, key: string): Promise<{ messageId: string; duplicate?: boolean }> {
    const { documents, gmail, call, address } = this.options;
    const recordKey = `${address}\n${key}`;
    const recorded = await documents.get<SentRecord>(SENT, recordKey);
    if (recorded) return { messageId: recorded.value.messageId, duplicate: true };
    const messageId = replyMessageId(address, key);
    // Composed first: recipients that are not addresses are refused before Gmail is asked anything.
    const raw = await replyRaw(reply, {
      from: address,
      messageId,
      date: new Date(this.options.now?.() ?? Date.now()),
    });
    const sent = await call('send the reply', async () => {
      // Looked for on every try: a send Gmail carried out but answered with a 5xx is found here.
      const earlier = await gmail.users.messages.list({
        userId: 'me',
        q: `rfc822msgid:${messageId.slice(1, -1)}`,
        labelIds: ['SENT'],
        maxResults: 1,
      });
      const found = earlier.data.messages?.[0];
      if (found?.id) return { gmailId: found.id, threadId: found.threadId ?? undefined, duplicate: true };
      const result = await gmail.users.messages.send({
        userId: 'me',
        requestBody: { raw, ...(reply.threadId ? { threadId: reply.threadId } : {}) },
      });
      if (!result.data.id)
        throw new TroupeError('TROUPE_GMAIL_FAILED', 'Gmail accepted the reply without a message id.');
      return { gmailId: result.data.id, threadId: result.data.threadId ?? undefined, duplicate: false };
    });
    const record: SentRecord = {
      messageId,
      gmailId: sent.gmailId,
      ...(sent.threadId ? { threadId: sent.threadId } : {}),
    };
    await documents.put(SENT, recordKey, record);
    return sent.duplicate ? { messageId, duplicate: true } : { messageId };
  }

  async close(emailId: string, outcome: string, context?: CloseContext): Promise<void> {
    const policy = this.options.markRead ?? 'answered';
    const read = policy === 'always' || (policy === 'answered' && context?.seenByPerson === true);
    await this.modify(emailId, outcomeLabel(outcome), read);
  }

  /**
   * Labels an email waiting for a person `Troupe/Notify`, so it can be found in Gmail; it stays
   * unread. Idempotent, and a failure is only logged: the interrupt stands without the label.
   */
  async labelNotify(emailId: string): Promise<void> {
    try {
      await this.modify(emailId, NOTIFY_LABEL, false);
    } catch (error) {
      this.options.logger?.warn({ err: error, emailId }, 'could not label the email Troupe/Notify');
    }
  }

  private async modify(emailId: string, label: string, read: boolean): Promise<void> {
    const labelId = await this.labels.idFor(label);
    // Adding a label it has and removing one it lacks are both no-ops for Gmail: idempotent.
    try {
      await this.options.call(`label the email ${emailId}`, () =>
        this.options.gmail.users.messages.modify({
          userId: 'me',
          id: emailId,
          requestBody: { addLabelIds: [labelId], ...(read ? { removeLabelIds: ['UNREAD'] } : {}) },
        }),
      );
    } catch (error) {
      // Deleted from Gmail meanwhile: there is nothing left to label.
      if (TroupeError.isInstance(error) && error.details?.status === 404) return;
      throw error;
    }
  }
}
