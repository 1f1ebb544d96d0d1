/**
 * Reading an email, whatever shape it came in: the id it is known by (so it is handled once), the
 * thread headers a reply needs, where its text comes from, and the error a person gets for input
 * that is not an email.
 */
import { describe, expect, it } from 'vitest';
import { type Email, parseEmail } from '../../src/email/emailInput.js';

function read(input: unknown): Email {
  const parsed = parseEmail(input);
  if (!parsed.ok) throw parsed.error;
  return parsed.email;
}

function problem(input: unknown): string {
  const parsed = parseEmail(input);
  if (parsed.ok) throw new Error('expected the input to be refused');
  expect(parsed.error.code).toBe('TROUPE_EMAIL_INVALID');
  return parsed.error.message;
}

/** FNV-1a, 64-bit, written out with BigInt: the id an email without one is given. */
function fnv(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i += 1) {
    h ^= BigInt(text.charCodeAt(i));
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return `email-${h.toString(16).padStart(16, '0')}`;
}

const gmail = { from: 'Ana <ana@acme.dev>', to: 'sam@acme.dev', subject: 'Hi', body: 'Lunch?' };

describe('the id an email is known by', () => {
  it('the id given, trimmed and without angle brackets', () => {
    expect(read({ ...gmail, id: '  <m-1@mail.example>  ' }).id).toBe('m-1@mail.example');
    expect(read({ ...gmail, id: 'plain' }).id).toBe('plain');
  });

  it('without one, the 64-bit FNV-1a of its Message-ID, so the same message read twice is handled once', () => {
    const first = read({ ...gmail, message_id: 'abc@mail.example' });
    const again = read({ ...gmail, messageId: ' <abc@mail.example> ', body: 'changed' });
    expect(first.id).toBe(fnv('message-id\n<abc@mail.example>'));
    expect(again.id).toBe(first.id);
    expect(read({ ...gmail, id: '<>', message_id: 'abc@mail.example' }).id).toBe(first.id);
  });

  it('without either, the hash of its sender, recipients, subject, date and text', () => {
    expect(read(gmail).id).toBe(fnv('Ana <ana@acme.dev>\nsam@acme.dev\nHi\nLunch?'));
    expect(read({ ...gmail, date: '2026-11-25' }).id).toBe(
      fnv('Ana <ana@acme.dev>\nsam@acme.dev\nHi\n2026-11-25\nLunch?'),
    );
    expect(read({ ...gmail, subject: 'Hello' }).id).not.toBe(read(gmail).id);
  });
});

describe('the thread headers a reply needs', () => {
  it('Message-ID and References in brackets, References without repeats, from a string or a list', () => {
    expect(read({ ...gmail, message_id: 'q@x', references: ' root@x  <prev@x>\n<root@x> ' })).toMatchObject({
      messageId: '<q@x>',
      references: ['<root@x>', '<prev@x>'],
    });
    expect(read({ ...gmail, references: ['<a@x>', 'b@x', '  ', 'a@x'] }).references).toEqual([
      '<a@x>',
      '<b@x>',
    ]);
    expect(read(gmail)).toMatchObject({ references: [] });
    expect(read(gmail)).not.toHaveProperty('messageId');
  });

  it('the thread id trimmed (either spelling); blank, none; labels from either spelling; cc and date only when given', () => {
    expect(read({ ...gmail, thread_id: ' t-1 ' }).threadId).toBe('t-1');
    expect(read({ ...gmail, threadId: 't-2', thread_id: 't-1' }).threadId).toBe('t-2');
    expect(read({ ...gmail, threadId: '   ' })).not.toHaveProperty('threadId');
    expect(read({ ...gmail, labelIds: ['INBOX'] }).labels).toEqual(['INBOX']);
    expect(read({ ...gmail, labels: ['A'], labelIds: ['B'] }).labels).toEqual(['A']);
    const plain = read({ ...gmail, cc: '' });
    expect(plain).not.toHaveProperty('cc');
    expect(plain).not.toHaveProperty('date');
    expect(read({ ...gmail, cc: 'ben@acme.dev', date: 'today' })).toMatchObject({
      cc: 'ben@acme.dev',
      date: 'today',
    });
  });

  it('an id or thread header holding a control character or a direction mark is refused, naming each field once', () => {
    expect(problem({ ...gmail, id: 'a\nb', references: ['x\u202e@y', 'z\u0000@y'] })).toBe(
      'This email cannot be read: id, references must not hold control characters, line breaks or text-direction marks.',
    );
    expect(problem({ ...gmail, threadId: 't\u200f', message_id: 'm\u0085@x' })).toMatch(
      /: threadId, messageId must not/u,
    );
  });
});

describe('where the text comes from', () => {
  it('Gmail: the body; with none, the HTML read as text; a body that is an HTML document is read as HTML', () => {
    expect(read({ ...gmail, body: undefined, html: '<p>one</p><p>two</p>' }).body).toBe('one\n\ntwo');
    expect(read({ ...gmail, body: '  \n <!DOCTYPE HTML><p>a</p><p>b</p>' }).body).toBe('a\n\nb');
    expect(read({ ...gmail, body: '<HTML><p>a</p><p>b</p></HTML>' }).body).toBe('a\n\nb');
    expect(read({ ...gmail, body: '<p>a</p> is how you write a paragraph' }).body).toBe(
      '<p>a</p> is how you write a paragraph',
    );
  });

  it('a mock thread: author, to, subject and the thread as the text', () => {
    expect(read({ author: 'Ana <ana@acme.dev>', to: 'sam@acme.dev', email_thread: 'Lunch?' })).toMatchObject({
      from: 'Ana <ana@acme.dev>',
      subject: '',
      body: 'Lunch?',
      source: 'mock',
      labels: [],
    });
  });

  it('a chat message: header lines in any case up to a blank line, then the body; the last message of a list', () => {
    const email = read({
      messages: [
        { content: 'From: old@x\nTo: sam@acme.dev\n\nold' },
        {
          content:
            'from: Ana <ana@acme.dev>\r\nTO: sam@acme.dev\r\nCc: ben@acme.dev\r\nSubject:  Lunch  \r\nMessage-ID: q@x\r\nReferences: a@x b@x\r\nDate: today\r\n\r\n  Lunch?\r\nAt noon.  ',
        },
      ],
    });
    expect(email).toMatchObject({
      from: 'Ana <ana@acme.dev>',
      to: 'sam@acme.dev',
      cc: 'ben@acme.dev',
      subject: 'Lunch',
      messageId: '<q@x>',
      references: ['<a@x>', '<b@x>'],
      date: 'today',
      body: 'Lunch?\nAt noon.',
      source: 'chat',
    });
    // A line that is not a header ends the headers: it is the body.
    expect(read({ content: 'From: a@x\nTo: b@x\nHello there\nSubject: not a header' })).toMatchObject({
      subject: '',
      body: 'Hello there\nSubject: not a header',
    });
  });

  it('a chat message in text/html is read as HTML, another content type as text', () => {
    const html = 'From: a@x\nTo: b@x\nContent-Type: Text/HTML; charset=utf-8\n\n<p>one</p><p>two</p>';
    expect(read({ content: html }).body).toBe('one\n\ntwo');
    expect(read({ content: html.replace('Text/HTML', 'text/plain') }).body).toBe('<p>one</p><p>two</p>');
  });
});

describe('input that is not an email', () => {
  it('says which header line a chat message lacks', () => {
    expect(problem({ content: 'hello there, no headers' })).toBe(
      'This email cannot be read: the chat message has no From: or To: line; write the email with From:, To: and Subject: lines, a blank line, then the body.',
    );
    expect(problem({ content: 'From: a@x\n\nbody' })).toMatch(/has no To: line;/u);
  });

  it('names the shape it looks like and each field wrong; the root when it is not an object', () => {
    expect(problem({ ...gmail, to: '  ', subject: 7 })).toBe(
      'This email cannot be read: not a Gmail-shaped email: to: is empty; subject: Invalid input: expected string, received number.',
    );
    expect(problem({ ...gmail, body: undefined })).toMatch(/body: is missing \(give body, or html\)/u);
    expect(problem({ author: 'a@x', to: 'b@x' })).toMatch(
      /^This email cannot be read: not a mock-shaped email: email_thread: /u,
    );
    expect(problem({ messages: [] })).toMatch(
      /^This email cannot be read: not a chat message holding an email: /u,
    );
  });

  it('an object of another shape is described by its first eight field names; anything else by the shapes expected', () => {
    const keys = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, i]));
    expect(problem(keys)).toMatch(
      /; got an object with fields "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"\.$/u,
    );
    expect(problem({ ['x'.repeat(50)]: 1 })).toMatch(new RegExp(`fields "${'x'.repeat(40)}"\\.$`, 'u'));
    expect(problem({})).toMatch(/; got an object with no fields\.$/u);
    for (const input of ['just text', null, [gmail], 42])
      expect(problem(input)).toMatch(
        /^This email cannot be read: expected an email in one of three shapes: Gmail/u,
      );
  });

  it('an object whose fields throw when read is refused, never thrown', () => {
    const hostile = {
      get from(): string {
        throw new Error('boom');
      },
    };
    const parsed = parseEmail(hostile);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.error.message).toBe(
        'This email cannot be read: the input could not be read (a property threw when read).',
      );
      expect((parsed.error.cause as Error).message).toBe('boom');
    }
  });
});
