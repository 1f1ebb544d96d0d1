import type { gmail_v1 } from 'googleapis/build/src/apis/gmail/v1.js';

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

// The assistant's input limits (emailInput.ts): longer text is cut rather than refused.
const MAX_BODY = 200_000;
const MAX_HEADER = 2_000;

/**
 * A message fetched with `format: 'full'` as the assistant's Gmail input: the headers it answers
 * with (From, To, Cc, Subject, Date, Message-ID, References), and the text of the `text/plain`
 * part, or of the `text/html` part with the markup stripped when there is no plain one.
 * Attachments are left out. `fallbackTo` stands in for a missing To (mail received by Bcc).
 */
export function gmailMessageToInput(message: gmail_v1.Schema$Message, fallbackTo: string): GmailEmailInput {
  const headers = new Map<string, string>();
  for (const h of message.payload?.headers ?? [])
    if (h.name && h.value !== undefined && h.value !== null && !headers.has(h.name.toLowerCase()))
      headers.set(h.name.toLowerCase(), h.value);
  const header = (name: string) => headers.get(name)?.trim().slice(0, MAX_HEADER);
  const plain = findPart(message.payload, 'text/plain');
  const html = plain ? undefined : findPart(message.payload, 'text/html');
  let body = plain ? decodePart(plain) : html ? htmlToText(decodePart(html)) : (message.snippet ?? '');
  if (body.length > MAX_BODY) body = body.slice(0, MAX_BODY);
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

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** HTML as readable text: scripts and styles dropped, block ends as line breaks, entities decoded. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1\s*>/giu, '')
    .replace(/<br\s*\/?>/giu, '\n')
    .replace(/<\/(p|div|li|tr|h[1-6]|blockquote)\s*>/giu, '\n')
    .replace(/<[^>]*>/gu, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/giu, (whole, entity: string) => {
      if (entity.startsWith('#x') || entity.startsWith('#X'))
        return safeCodePoint(Number.parseInt(entity.slice(2), 16), whole);
      if (entity.startsWith('#')) return safeCodePoint(Number(entity.slice(1)), whole);
      return ENTITIES[entity.toLowerCase()] ?? whole;
    })
    .replace(/[ \t]+\n/gu, '\n')
    .replace(/\n{3,}/gu, '\n\n')
    .trim();
}

function safeCodePoint(code: number, fallback: string): string {
  return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : fallback;
}
