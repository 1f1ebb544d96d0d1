import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEmail } from '../../src/email/emailInput.js';
import { hostileHtmlBodies } from '../support/hostileHtml.js';
import { runTroupe } from '../support/runTroupe.js';

const chat = (headers: string[], body: string) => `${headers.join('\n')}\n\n${body}`;

/**
 * Every input shape the assistant reads, with and without ids. `variant` writes the same emails
 * the way another export of the same mailbox might: ids padded, Message-IDs with or without their
 * angle brackets, keys in another order.
 */
function mailbox(variant: boolean): unknown[] {
  const pad = (id: string) => (variant ? `  ${id}\t` : id);
  const mid = (id: string) => (variant ? ` ${id} ` : `<${id}>`);
  return [
    {
      id: pad('gm-1'),
      from: 'Ana <ana@acme.dev>',
      to: 'sam@acme.dev',
      subject: 'Gmail with an id',
      body: 'One.',
    },
    {
      id: pad('gm-2'),
      thread_id: 't-2',
      message_id: mid('gm-2@mail.example'),
      from: 'ana@acme.dev',
      to: 'sam@acme.dev',
      subject: 'Gmail, snake case',
      body: 'Two.',
    },
    variant
      ? { body: 'Three.', subject: 'Gmail without an id', to: 'sam@acme.dev', from: 'bo@acme.dev' }
      : { from: 'bo@acme.dev', to: 'sam@acme.dev', subject: 'Gmail without an id', body: 'Three.' },
    {
      messageId: mid('no-id-4@mail.example'),
      from: 'bo@acme.dev',
      to: 'sam@acme.dev',
      subject: 'Gmail without an id, with a Message-ID',
      body: variant ? 'Four (as exported again).' : 'Four.',
    },
    {
      from: 'news@letters.example',
      to: 'sam@acme.dev',
      subject: 'Gmail with HTML only',
      html: '<html><body><p>Five &amp; more</p></body></html>',
    },
    {
      id: pad('<mk-6@mail.example>'),
      author: 'Cy <cy@acme.dev>',
      to: 'sam@acme.dev',
      subject: 'Mock with an id',
      email_thread: 'Six.',
    },
    { author: 'Cy <cy@acme.dev>', to: 'sam@acme.dev', subject: 'Mock without an id', email_thread: 'Seven.' },
    {
      id: pad('ch-8'),
      content: chat(['From: Di <di@acme.dev>', 'To: sam@acme.dev', 'Subject: Chat with an id'], 'Eight.'),
    },
    { content: chat(['From: Di <di@acme.dev>', 'To: sam@acme.dev', 'Subject: Chat without an id'], 'Nine.') },
    {
      messages: [
        { content: 'earlier message' },
        {
          content: chat(
            [
              'From: Di <di@acme.dev>',
              'To: sam@acme.dev',
              'Subject: Chat messages',
              `Message-ID: ${mid('ch-10@mail.example')}`,
            ],
            variant ? 'Ten, quoted differently.' : 'Ten.',
          ),
        },
      ],
    },
    {
      content: chat(
        [
          'From: Di <di@acme.dev>',
          'To: sam@acme.dev',
          'Subject: Chat in HTML',
          'Content-Type: text/html; charset=utf-8',
        ],
        '<div>Eleven</div>',
      ),
    },
  ];
}

const SUBJECTS = mailbox(false).map(
  (input) =>
    /"subject":"([^"]*)"|Subject: ([^\\]*)\\n/u.exec(JSON.stringify(input))?.slice(1).find(Boolean) ?? '',
);

describe('troupe email on the same mailbox twice', () => {
  it('the second run says “No new email” for every input shape, ids padded or derived from the content', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-email-ids-'));
    const env = { TROUPE_DATA_DIR: dir, TROUPE_EMAIL_NOW: '2026-11-25T09:00:00Z', LOG_LEVEL: 'silent' };
    const write = async (name: string, emails: unknown[]) => {
      const file = join(dir, name);
      await writeFile(file, `${emails.map((e) => JSON.stringify(e)).join('\n')}\n`);
      return file;
    };
    const first = await runTroupe(['email', '--mailbox', await write('a.jsonl', mailbox(false))], env);
    expect(first.code).toBe(0);
    expect(first.stdout).not.toContain('cannot be read');
    for (const subject of SUBJECTS)
      expect(first.stdout, subject).toMatch(new RegExp(`^• \\S+ “${subject}”`, 'mu'));
    expect(first.stdout).toContain('• gm-1 “Gmail with an id”');
    expect(first.stdout).toContain('• mk-6@mail.example “Mock with an id”');

    const again = await runTroupe(['email', '--mailbox', join(dir, 'a.jsonl')], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('No new email');
    // Each email handled is a line `• <id> “<subject>” from …`: none this time.
    expect(again.stdout).not.toMatch(/^• /mu);

    // The same emails as another export writes them: still nothing new.
    const other = await runTroupe(['email', '--mailbox', await write('b.jsonl', mailbox(true))], env);
    expect(other.stdout).not.toContain('cannot be read');
    expect(other.stdout).toContain('No new email');
    expect(other.stdout).not.toMatch(/^• /mu);
  });
});

describe('email ids and thread headers as the assistant keeps them', () => {
  const base = { from: 'a@x.example', to: 'sam@acme.dev', subject: 'Hi', body: 'Hello.' };
  const email = (input: unknown) => {
    const parsed = parseEmail(input);
    if (!parsed.ok) throw parsed.error;
    return parsed.email;
  };

  it('trims ids and drops the angle brackets of a Message-ID used as one', () => {
    expect(email({ ...base, id: ' m1 ' }).id).toBe('m1');
    expect(email({ ...base, id: '<m1@x.example>' }).id).toBe('m1@x.example');
    expect(email({ id: '\tc1\n', content: 'From: a@x.example\nTo: b@x.example\n\nHi' }).id).toBe('c1');
  });

  it('writes Message-IDs and References as <…>, without repeats', () => {
    const parsed = email({
      ...base,
      id: 'e1',
      messageId: ' m1@x.example ',
      references: 'r1@x.example <r2@x.example> <r1@x.example>',
    });
    expect(parsed.messageId).toBe('<m1@x.example>');
    expect(parsed.references).toEqual(['<r1@x.example>', '<r2@x.example>']);
  });

  it('derives an id from the Message-ID (brackets or not), else from the content', () => {
    const a = email({ ...base, messageId: '<m9@x.example>' }).id;
    expect(a).toMatch(/^email-[0-9a-f]{16}$/u);
    expect(email({ ...base, body: 'Other text.', messageId: 'm9@x.example' }).id).toBe(a);
    const b = email(base).id;
    expect(email({ ...base }).id).toBe(b);
    expect(email({ ...base, body: 'Hello!' }).id).not.toBe(b);
    expect(email({ ...base, date: '2026-11-25T09:00:00Z' }).id).not.toBe(b);
  });
});

describe('troupe email on a mailbox of hostile HTML', () => {
  it('reads every one of its emails (2 MB bodies), and the ordinary email after them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-email-html-'));
    const env = { TROUPE_DATA_DIR: dir, TROUPE_EMAIL_NOW: '2026-11-25T09:00:00Z', LOG_LEVEL: 'silent' };
    const bodies = Object.entries(hostileHtmlBodies(2_000_000)).filter(([name]) =>
      ['lt without gt', 'unclosed script', 'deeply nested divs', 'br runs', 'newsletter'].includes(name),
    );
    const lines = bodies.map(([name, html], i) =>
      JSON.stringify({ id: `h${i}`, from: 'news@letters.example', to: 'sam@acme.dev', subject: name, html }),
    );
    lines.push(
      JSON.stringify({
        id: 'ok-1',
        from: 'ana@acme.dev',
        to: 'sam@acme.dev',
        subject: 'Lunch?',
        body: 'Lunch at noon?',
      }),
    );
    const file = join(dir, 'hostile.jsonl');
    await writeFile(file, `${lines.join('\n')}\n`);
    const run = await runTroupe(['email', '--mailbox', file], env);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('cannot be read');
    for (const [name] of bodies) expect(run.stdout, name).toMatch(new RegExp(`^• h\\d “${name}”`, 'mu'));
    expect(run.stdout).toMatch(/^• ok-1 “Lunch\?”/mu);
    const shown = await runTroupe(['inbox', 'list'], env);
    expect(shown.code).toBe(0);
  });
});
