import { z } from 'zod';
import { zodIssues } from '../config/zodIssues.js';
import { TroupeError } from '../ports/troupeError.js';
import { cutText, htmlToText } from './htmlText.js';

/** One email, however it arrived (Gmail API, mock, chat message), normalised once. */
export interface Email {
  /**
   * The provider's id for this message (Gmail message id), or one given with the input (trimmed,
   * without angle brackets); for input without one, an id derived from its Message-ID, else from
   * its sender, recipients, subject, date and text, so the same email read again has the same id.
   */
  id: string;
  /** The conversation it belongs to (Gmail thread id), if known. */
  threadId?: string;
  /** The RFC 5322 Message-ID header (`<…>`), for In-Reply-To and References when answering. */
  messageId?: string;
  /** Message-IDs of the thread so far (the References header, each `<…>`), oldest first. */
  references: string[];
  from: string;
  to: string;
  cc?: string;
  subject: string;
  /**
   * The text of the email (for a mock thread, the whole thread as given): HTML read as text, at
   * most {@link BODY_MAX_CHARS} characters (a longer one is cut with a line saying so).
   */
  body: string;
  /** When it was sent, ISO 8601, if known. */
  date?: string;
  labels: string[];
  /** Which input shape it came in. */
  source: 'gmail' | 'mock' | 'chat';
}

const text = (max: number) => z.string().max(max);
const address = text(2_000).trim().min(1, 'is empty');
// Bodies are cut to BODY_MAX_CHARS (HTML read as text first) rather than refused, up to this.
const MAX_BODY = 20_000_000;

/**
 * The Gmail API shape, with thread and header fields. The text is `body`, or
 * `html` (read as text) when there is no `body`; a `body` that is an HTML document is read as HTML.
 */
export const gmailEmailInputSchema = z
  .object({
    id: text(500).optional(),
    threadId: text(500).optional(),
    thread_id: text(500).optional(),
    from: address,
    to: address,
    cc: text(2_000).optional(),
    subject: text(2_000).default(''),
    body: text(MAX_BODY).optional(),
    html: text(MAX_BODY).optional(),
    date: text(200).optional(),
    labels: z.array(text(200)).max(200).optional(),
    labelIds: z.array(text(200)).max(200).optional(),
    messageId: text(1_000).optional(),
    message_id: text(1_000).optional(),
    references: z.union([text(20_000), z.array(text(1_000)).max(500)]).optional(),
  })
  .refine((g) => g.body !== undefined || g.html !== undefined, {
    message: 'is missing (give body, or html)',
    path: ['body'],
  });

/** The mock / Studio shape: `author`, `to`, `subject`, `email_thread`. */
export const mockEmailInputSchema = z.object({
  id: text(500).optional(),
  author: address,
  to: address,
  subject: text(2_000).default(''),
  email_thread: text(MAX_BODY),
});

/**
 * A chat message whose content is an email written out with headers (`From:`, `To:`, `Subject:`);
 * with `Content-Type: text/html`, or a body that is an HTML document, the body is read as HTML.
 */
export const chatEmailInputSchema = z.union([
  z.object({ id: text(500).optional(), content: text(MAX_BODY) }),
  z.object({
    id: text(500).optional(),
    messages: z.array(z.object({ content: text(MAX_BODY) })).min(1),
  }),
]);

/** What {@link parseEmail} gives: an email, or why the input is not one. */
export type ParsedEmail = { ok: true; email: Email } | { ok: false; error: TroupeError };

const SHAPES =
  'an email in one of three shapes: Gmail ({ id, from, to, subject, body }), mock ({ author, to, subject, email_thread }) or a chat message ({ content } with From:, To: and Subject: lines)';

/**
 * Reads an email in any of the three input shapes into one typed {@link Email}. A missing or
 * malformed field is a `TROUPE_EMAIL_INVALID` error naming the shape and each field; never a
 * throw, so one bad email cannot stop an inbox. Hostile objects (throwing getters) are refused the
 * same way.
 */
export function parseEmail(input: unknown): ParsedEmail {
  try {
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      return invalid(`expected ${SHAPES}`);
    const record = input as Record<string, unknown>;
    if ('author' in record || 'email_thread' in record) return checkIds(fromMock(record));
    if ('from' in record || 'body' in record || 'html' in record) return checkIds(fromGmail(record));
    if ('content' in record || 'messages' in record) return checkIds(fromChat(record));
    return invalid(`expected ${SHAPES}; got an object with ${describeKeys(record)}`);
  } catch (error) {
    return invalid('the input could not be read (a property threw when read)', error);
  }
}

// Control characters and text-direction marks: a terminal drops them (so an id shown could not be
// typed back to answer its interrupt), and in a reply's In-Reply-To or References a line break
// would add headers.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/u;

/** The email, or why its id or thread headers cannot be used as they are. */
function checkIds(parsed: ParsedEmail): ParsedEmail {
  if (!parsed.ok) return parsed;
  const { id, threadId, messageId, references } = parsed.email;
  const fields: [string, string | undefined][] = [
    ['id', id],
    ['threadId', threadId],
    ['messageId', messageId],
    ...references.map((r): [string, string] => ['references', r]),
  ];
  const bad = fields.filter(([, value]) => value !== undefined && UNPRINTABLE.test(value)).map(([f]) => f);
  if (bad.length === 0) return parsed;
  return invalid(
    `${[...new Set(bad)].join(', ')} must not hold control characters, line breaks or text-direction marks`,
  );
}

function fromGmail(record: Record<string, unknown>): ParsedEmail {
  const parsed = gmailEmailInputSchema.safeParse(record);
  if (!parsed.success) return invalid(`not a Gmail-shaped email: ${zodIssues(parsed.error)}`);
  const g = parsed.data;
  const references =
    g.references === undefined ? [] : Array.isArray(g.references) ? g.references : g.references.split(/\s+/u);
  return withId(g.id, {
    threadId: g.threadId ?? g.thread_id,
    messageId: g.messageId ?? g.message_id,
    references,
    from: g.from,
    to: g.to,
    cc: g.cc,
    subject: g.subject,
    body: g.body === undefined ? htmlToText(g.html ?? '') : bodyText(g.body),
    date: g.date,
    labels: g.labels ?? g.labelIds ?? [],
    source: 'gmail',
  });
}

function fromMock(record: Record<string, unknown>): ParsedEmail {
  const parsed = mockEmailInputSchema.safeParse(record);
  if (!parsed.success) return invalid(`not a mock-shaped email: ${zodIssues(parsed.error)}`);
  const m = parsed.data;
  return withId(m.id, {
    references: [],
    from: m.author,
    to: m.to,
    subject: m.subject,
    body: bodyText(m.email_thread),
    labels: [],
    source: 'mock',
  });
}

function fromChat(record: Record<string, unknown>): ParsedEmail {
  const parsed = chatEmailInputSchema.safeParse(record);
  if (!parsed.success) return invalid(`not a chat message holding an email: ${zodIssues(parsed.error)}`);
  const content =
    'content' in parsed.data ? parsed.data.content : (parsed.data.messages.at(-1)?.content ?? '');
  const { headers, body } = splitHeaders(content);
  const missing = ['from', 'to'].filter((h) => !headers.get(h));
  if (missing.length > 0)
    return invalid(
      `the chat message has no ${missing.map((m) => `${m[0]?.toUpperCase()}${m.slice(1)}:`).join(' or ')} line; write the email with From:, To: and Subject: lines, a blank line, then the body`,
    );
  const html = /^\s*text\/html\b/iu.test(headers.get('content-type') ?? '');
  const references = headers.get('references');
  return withId(parsed.data.id, {
    messageId: headers.get('message-id'),
    references: references ? references.split(/\s+/u) : [],
    from: headers.get('from') as string,
    to: headers.get('to') as string,
    cc: headers.get('cc'),
    subject: headers.get('subject') ?? '',
    body: html ? htmlToText(body) : bodyText(body),
    date: headers.get('date'),
    labels: [],
    source: 'chat',
  });
}

/** The fields of an email as read, before its id and thread headers are settled. */
type EmailFields = Omit<Email, 'id' | 'threadId' | 'messageId' | 'cc' | 'date'> & {
  threadId?: string | undefined;
  messageId?: string | undefined;
  cc?: string | undefined;
  date?: string | undefined;
};

/**
 * The email with its id: the one given (trimmed, without angle brackets), else one derived from
 * its Message-ID, else from its sender, recipients, subject, date and text. Message-IDs and
 * References as `<…>` (brackets added when missing), References without repeats.
 */
function withId(given: string | undefined, fields: EmailFields): ParsedEmail {
  const { threadId, messageId: rawMessageId, cc, date, references, ...rest } = fields;
  const messageId = bracketed(rawMessageId);
  const refs = [...new Set(references.map(bracketed).filter((r): r is string => r !== undefined))];
  const email: Omit<Email, 'id'> = {
    ...(threadId?.trim() ? { threadId: threadId.trim() } : {}),
    ...(messageId ? { messageId } : {}),
    ...rest,
    references: refs,
    ...(cc ? { cc } : {}),
    ...(date ? { date } : {}),
  };
  // The content is hashed only for input without an id (building the basis costs a body copy).
  const derived = () =>
    contentId(
      messageId
        ? `message-id\n${messageId}`
        : [email.from, email.to, email.subject, ...(date ? [date] : []), email.body].join('\n'),
    );
  return { ok: true, email: { id: unbracketed(given) ?? derived(), ...email } };
}

/** A value trimmed and without one pair of surrounding angle brackets; undefined when empty. */
function unbracketed(value: string | undefined): string | undefined {
  const trimmed = value?.trim() ?? '';
  const bare = trimmed.startsWith('<') && trimmed.endsWith('>') ? trimmed.slice(1, -1).trim() : trimmed;
  return bare === '' ? undefined : bare;
}

/** A Message-ID as `<…>`, however it was written (with or without brackets, padded). */
function bracketed(value: string | undefined): string | undefined {
  const bare = unbracketed(value);
  return bare === undefined ? undefined : `<${bare}>`;
}

/** A plain-text body as the assistant keeps it: an HTML document read as HTML, any text cut to size. */
function bodyText(body: string): string {
  const start = body.slice(0, 200).trimStart().slice(0, 14).toLowerCase();
  return start.startsWith('<!doctype html') || start.startsWith('<html') ? htmlToText(body) : cutText(body);
}

/** Header lines (`Name: value`) up to the first blank line, then the body. */
function splitHeaders(content: string): { headers: Map<string, string>; body: string } {
  const headers = new Map<string, string>();
  const lines = content.replace(/\r\n/gu, '\n').split('\n');
  let i = 0;
  for (; i < lines.length; i += 1) {
    const line = lines[i] as string;
    if (line.trim() === '') {
      i += 1;
      break;
    }
    const match = /^([A-Za-z][A-Za-z-]*):\s*(.*)$/u.exec(line);
    if (!match) break;
    headers.set((match[1] as string).toLowerCase(), (match[2] as string).trim());
  }
  return { headers, body: lines.slice(i).join('\n').trim() };
}

/** A stable id for an input that has none: the same email gets the same id, so it is processed once. */
function contentId(content: string): string {
  // FNV-1a, 64-bit, in four 16-bit limbs: stable across runs and processes, no crypto needed for an id.
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  for (let i = 0; i < content.length; i += 1) {
    h0 ^= content.charCodeAt(i);
    // × 0x100000001b3 (the FNV prime, 2^40 + 0x1b3), modulo 2^64.
    const t0 = h0 * 0x1b3;
    let t1 = h1 * 0x1b3;
    let t2 = h2 * 0x1b3 + (h0 << 8);
    let t3 = h3 * 0x1b3 + (h1 << 8);
    t1 += t0 >>> 16;
    t2 += t1 >>> 16;
    t3 += t2 >>> 16;
    h0 = t0 & 0xffff;
    h1 = t1 & 0xffff;
    h2 = t2 & 0xffff;
    h3 = t3 & 0xffff;
  }
  return `email-${[h3, h2, h1, h0].map((h) => h.toString(16).padStart(4, '0')).join('')}`;
}

function describeKeys(record: Record<string, unknown>): string {
  const keys = Object.keys(record).slice(0, 8);
  return keys.length === 0
    ? 'no fields'
    : `fields ${keys.map((k) => JSON.stringify(k.slice(0, 40))).join(', ')}`;
}

function invalid(message: string, cause?: unknown): ParsedEmail {
  return {
    ok: false,
    error: new TroupeError('TROUPE_EMAIL_INVALID', `This email cannot be read: ${message}.`, {
      ...(cause !== undefined ? { cause } : {}),
    }),
  };
}
