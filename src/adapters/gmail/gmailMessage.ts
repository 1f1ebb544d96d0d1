import type { gmail_v1 } from 'googleapis/build/src/apis/gmail/v1.js';
import { cutText, htmlToText } from '../../email/htmlText.js';

export { htmlToText };

/** A Gmail message in the Gmail input shape the email assistant reads (`parseEmail`). */
export interface GmailEmailInput {
  id: string;
  threadId?: string;
  from: string;
  to: string;
  cc?: string;
  subject: string;
  body: string;
  date?: string;
  labelIds: string[];
  messageId?: string;
  references?: string[];
}

// The assistant's input limit for a header (emailInput.ts): a longer one is cut rather than refused.
const MAX_HEADER = 2_000;

/**
 * A message fetched with `format: 'full'` as the assistant's Gmail input: the headers it answers
 * with (From, To, Cc, Subject, Date, Message-ID, References), and the text of the `text/plain`
 * part, or of the `text/html` part read as text ({@link htmlToText}) when there is no plain one;
 * a body too long for the assistant is cut with a line saying so. Attachments are left out. `fallbackTo` stands in for a missing To (mail received by Bcc).
 */
export function gmailMessageToInput(message: gmail_v1.Schema$Message, fallbackTo: string): GmailEmailInput {
  const headers = new Map<string, string>();
  for (const h of message.payload?.headers ?? [])
    if (h.name && h.value !== undefined && h.value !== null && !headers.has(h.name.toLowerCase()))
      headers.set(h.name.toLowerCase(), h.value);
  const header = (name: string) => headers.get(name)?.trim().slice(0, MAX_HEADER);
  const plain = findPart(message.payload, 'text/plain');
  const html = plain ? undefined : findPart(message.payload, 'text/html');
  const body = cutText(
    plain ? decodePart(plain) : html ? htmlToText(decodePart(html)) : (message.snippet ?? ''),
  );
  const references = (header('references') ?? '').split(/\s+/u).filter((r) => r !== '');
  const messageId = header('message-id');
  const cc = header('cc');
  const date = header('date');
  return {
    id: message.id ?? '',
    ...(message.threadId ? { threadId: message.threadId } : {}),
    from: header('from') || '(unknown sender)',
    to: header('to') || fallbackTo,
    ...(cc ? { cc } : {}),
    subject: header('subject') ?? '',
    body,
    ...(date ? { date } : {}),
    labelIds: message.labelIds ?? [],
    ...(messageId ? { messageId } : {}),
    ...(references.length > 0 ? { references: references.slice(-500) } : {}),
  };
}

/** The first part of `mimeType` that is not an attachment, depth first. */
function findPart(
  part: gmail_v1.Schema$MessagePart | undefined,
  mimeType: string,
): gmail_v1.Schema$MessagePart | undefined {
  if (!part) return undefined;
  if (part.mimeType?.toLowerCase() === mimeType && !part.filename && part.body?.data) return part;
  for (const child of part.parts ?? []) {
    const found = findPart(child, mimeType);
    if (found) return found;
  }
  return undefined;
}

/** A part's body: base64url from the API, in the charset its Content-Type names (UTF-8 otherwise). */
function decodePart(part: gmail_v1.Schema$MessagePart): string {
  const bytes = Buffer.from(part.body?.data ?? '', 'base64url');
  const contentType = part.headers?.find((h) => h.name?.toLowerCase() === 'content-type')?.value ?? '';
  const charset = /charset="?([\w.:-]+)"?/iu.exec(contentType)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}
