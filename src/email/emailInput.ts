import { z } from 'zod';
import { TroupeError } from '../ports/troupeError.js';

/** One email, however it arrived (Gmail API, mock, chat message), normalised once. */
export interface Email {
  /** The provider's id for this message (Gmail message id), or one given with the input. */
  id: string;
  /** The conversation it belongs to (Gmail thread id), if known. */
  threadId?: string;
  /** The RFC 5322 Message-ID header, for In-Reply-To and References when answering. */
  messageId?: string;
  /** Message-IDs of the thread so far (the References header), oldest first. */
  references: string[];
  from: string;
  to: string;
  cc?: string;
  subject: string;
  /** The text of the email (for a mock thread, the whole thread as given). */
  body: string;
  /** When it was sent, ISO 8601, if known. */
  date?: string;
  labels: string[];
  /** Which input shape it came in. */
  source: 'gmail' | 'mock' | 'chat';
}

const text = (max: number) => z.string().max(max);
const address = text(2_000).trim().min(1, 'is empty');
const MAX_BODY = 200_000;

/** The Gmail API shape as seed 002 reads it, with thread and header fields. */
export const gmailEmailInputSchema = z.object({
  id: text(500).trim().min(1, 'is empty'),
  threadId: text(500).optional(),
  thread_id: text(500).optional(),
  from: address,
  to: address,
  cc: text(2_000).optional(),
  subject: text(2_000).default(''),
  body: text(MAX_BODY),
  date: text(200).optional(),
  labels: z.array(text(200)).max(200).optional(),
  labelIds: z.array(text(200)).max(200).optional(),
  messageId: text(1_000).optional(),
  message_id: text(1_000).optional(),
  references: z.union([text(20_000), z.array(text(1_000)).max(500)]).optional(),
});

/** The mock / Studio shape: `author`, `to`, `subject`, `email_thread`. */
export const mockEmailInputSchema = z.object({
  id: text(500).trim().min(1).optional(),
  author: address,
  to: address,
  subject: text(2_000).default(''),
  email_thread: text(MAX_BODY),
});

/** A chat message whose content is an email written out with headers (`From:`, `To:`, `Subject:`). */
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
    if ('from' in record || 'body' in record) return checkIds(fromGmail(record));
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
  if (!parsed.success) return invalid(`not a Gmail-shaped email: ${issues(parsed.error)}`);
  const g = parsed.data;
  const references =
    g.references === undefined
      ? []
      : Array.isArray(g.references)
        ? g.references
        : g.references.split(/\s+/u).filter((r) => r !== '');
  const threadId = g.threadId ?? g.thread_id;
  const messageId = g.messageId ?? g.message_id;
  return {
    ok: true,
    email: {
      id: g.id,
      ...(threadId ? { threadId } : {}),
      ...(messageId ? { messageId } : {}),
      references,
      from: g.from,
      to: g.to,
      ...(g.cc ? { cc: g.cc } : {}),
      subject: g.subject,
      body: g.body,
      ...(g.date ? { date: g.date } : {}),
      labels: g.labels ?? g.labelIds ?? [],
      source: 'gmail',
    },
  };
}

function fromMock(record: Record<string, unknown>): ParsedEmail {
  const parsed = mockEmailInputSchema.safeParse(record);
  if (!parsed.success) return invalid(`not a mock-shaped email: ${issues(parsed.error)}`);
  const m = parsed.data;
  return {
    ok: true,
    email: {
      id: m.id ?? contentId(`${m.author}\n${m.to}\n${m.subject}\n${m.email_thread}`),
      references: [],
      from: m.author,
      to: m.to,
      subject: m.subject,
      body: m.email_thread,
      labels: [],
      source: 'mock',
    },
  };
}

function fromChat(record: Record<string, unknown>): ParsedEmail {
  const parsed = chatEmailInputSchema.safeParse(record);
  if (!parsed.success) return invalid(`not a chat message holding an email: ${issues(parsed.error)}`);
  const content =
    'content' in parsed.data ? parsed.data.content : (parsed.data.messages.at(-1)?.content ?? '');
  const { headers, body } = splitHeaders(content);
  const missing = ['from', 'to'].filter((h) => !headers.get(h));
  if (missing.length > 0)
    return invalid(
      `the chat message has no ${missing.map((m) => `${m[0]?.toUpperCase()}${m.slice(1)}:`).join(' or ')} line; write the email with From:, To: and Subject: lines, a blank line, then the body`,
    );
  const messageId = headers.get('message-id');
  const references = headers.get('references');
  return {
    ok: true,
    email: {
      id: parsed.data.id ?? contentId(content),
      ...(messageId ? { messageId } : {}),
      references: references ? references.split(/\s+/u).filter((r) => r !== '') : [],
      from: headers.get('from') as string,
      to: headers.get('to') as string,
      ...(headers.get('cc') ? { cc: headers.get('cc') as string } : {}),
      subject: headers.get('subject') ?? '',
      body,
      ...(headers.get('date') ? { date: headers.get('date') as string } : {}),
      labels: [],
      source: 'chat',
    },
  };
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
  // FNV-1a, 64-bit: stable across runs and processes, no crypto needed for an id.
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < content.length; i += 1) {
    hash ^= BigInt(content.charCodeAt(i));
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return `email-${hash.toString(16).padStart(16, '0')}`;
}

function issues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`).join('; ');
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
