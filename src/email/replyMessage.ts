import MailComposer from 'nodemailer/lib/mail-composer';
import type { EmailReply } from '../ports/mailbox.js';
import { TroupeError } from '../ports/troupeError.js';
import { parseRecipients } from './emailAddress.js';

/** The subject of a reply: one `Re:` in front, never `Re: Re:` (also after `RE:`, `Re[2]:`). */
export function replySubject(subject: string): string {
  const bare = subject.replace(/^(\s*re(\[\d+\])?\s*:\s*)+/iu, '').trim();
  return `Re: ${bare}`;
}

/** What a reply is sent as besides its content. */
export interface ReplyEnvelope {
  /** The sender (`Name <addr>` or `addr`). */
  from: string;
  /** The reply's own Message-ID (`<…>`). */
  messageId: string;
  date?: Date;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters become spaces
const BREAKS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/gu;
const MESSAGE_ID = /^<[^\s<>]+>$/u;

/**
 * A reply as an RFC 5322 message (CRLF line ends), written by nodemailer's MIME composer: From and
 * To parsed as address lists and written back with names quoted and non-ASCII names RFC 2047
 * encoded; the subject with one `Re:`, on one line, encoded when not ASCII; In-Reply-To the
 * answered Message-ID and References the thread's Message-IDs followed by it, each once; the
 * content as UTF-8 text in base64.
 *
 * @throws TroupeError `TROUPE_EMAIL_INVALID` when the recipients (or the sender) are not a list of
 *   email addresses, or hold a line break: nothing is sent then.
 */
export async function composeReply(reply: EmailReply, envelope: ReplyEnvelope): Promise<string> {
  const to = parseRecipients(reply.to);
  if (!to.ok)
    throw new TroupeError(
      'TROUPE_EMAIL_INVALID',
      `The reply cannot be sent to ${JSON.stringify(reply.to.slice(0, 200))}: ${to.problem}. Write the recipients as email addresses separated by commas, e.g. "Name <name@example.com>, other@example.com".`,
    );
  const from = parseRecipients(envelope.from);
  if (!from.ok || from.recipients.length !== 1)
    throw new TroupeError(
      'TROUPE_EMAIL_INVALID',
      `The reply cannot be sent from ${JSON.stringify(envelope.from.slice(0, 200))}: ${from.ok ? 'it names more than one address' : from.problem}.`,
    );
  const inReplyTo = messageIdOf(reply.inReplyTo);
  const references = [
    ...new Set([...reply.references, ...(inReplyTo ? [inReplyTo] : [])].map(messageIdOf)),
  ].filter((r): r is string => r !== undefined);
  const composer = new MailComposer({
    from: from.recipients[0],
    to: to.recipients,
    subject: replySubject(reply.subject.replace(BREAKS, ' ')),
    messageId: envelope.messageId,
    date: envelope.date ?? new Date(),
    ...(inReplyTo ? { inReplyTo } : {}),
    ...(references.length > 0 ? { references } : {}),
    text: reply.content.replace(/\r?\n/gu, '\r\n'),
    textEncoding: 'B',
    encoding: 'base64',
    newline: 'windows',
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return (await composer.compile().build()).toString('utf8');
}

/** A Message-ID as `<…>` (brackets added when missing), or undefined when it is not one. */
function messageIdOf(value: string | undefined): string | undefined {
  const trimmed = value?.trim() ?? '';
  if (trimmed === '') return undefined;
  const id = trimmed.startsWith('<') ? trimmed : `<${trimmed}>`;
  return MESSAGE_ID.test(id) ? id : undefined;
}
