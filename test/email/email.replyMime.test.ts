import { type AddressObject, simpleParser } from 'mailparser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalMailbox } from '../../src/adapters/mail/localMailbox.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import {
  formatAddressList,
  greetingName,
  parseRecipients,
  senderAddress,
} from '../../src/email/emailAddress.js';
import { responseToolSchemas } from '../../src/email/responseTools.js';
import type { EmailReply } from '../../src/ports/mailbox.js';
import type { TroupeStore } from '../../src/ports/store.js';
import { assistantOn, EMAIL_START } from '../support/emailHarness.js';
import { type FakeGoogle, startFakeGoogle } from '../support/fakeGoogle.js';
import { openTestAccount } from '../support/gmailTestAccount.js';

let fake: FakeGoogle;
let store: TroupeStore;
beforeEach(async () => {
  fake = await startFakeGoogle();
  store = createMemoryStore();
});
afterEach(async () => {
  await fake.close();
});

const addresses = (field: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(field) ? field : field ? [field] : [])
    .flatMap((a) => a.value)
    .map((a) => ({ name: a.name, address: a.address }));

/** The raw message of each `messages.send` Gmail received, decoded from base64url. */
const gmailRaws = () =>
  fake.requests
    .filter((r) => r.path.endsWith('/messages/send'))
    .map((r) => Buffer.from(String((r.body as { raw?: string }).raw), 'base64url').toString('utf8'));

/** A reply with every hard part at once; what a parser must read back from it. */
const hard: EmailReply = {
  to: '"Rossi, Marco" <marco@acme.dev>, Jürgen Müller <juergen@acme.dev>, 李雷 <lilei@acme.cn>, "🎉 Party, Bot" <party@acme.dev>, "Back\\\\slash \\"Q\\" O\'Hara" <bq@acme.dev>, plain@acme.dev',
  subject: 'RE: Grüße aus Berlin\r\nBcc: evil@x.example\nund mehr',
  content: 'Hallo Marco,\n\nja — gerne. 😀\nSam',
  inReplyTo: '<q1@mail.acme.dev>',
  references: ['<root@mail.acme.dev>', 'mid@mail.acme.dev', '<q1@mail.acme.dev>'],
  threadId: 'thread-q1',
};
const hardTo = [
  { name: 'Rossi, Marco', address: 'marco@acme.dev' },
  { name: 'Jürgen Müller', address: 'juergen@acme.dev' },
  { name: '李雷', address: 'lilei@acme.cn' },
  { name: '🎉 Party, Bot', address: 'party@acme.dev' },
  { name: 'Back\\slash "Q" O\'Hara', address: 'bq@acme.dev' },
  { name: '', address: 'plain@acme.dev' },
];

/** Reads a raw reply back with mailparser and checks everything the reply said. */
async function expectReadsBack(raw: string, from: { name: string; address: string }) {
  // A well-formed message: CRLF line ends, headers in ASCII (non-ASCII is RFC 2047 encoded).
  const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
  expect(raw).not.toMatch(/(^|[^\r])\n/u);
  expect(head).toMatch(/^[\x20-\x7e\r\n\t]*$/u);
  expect(head.match(/^Subject:/gmu)).toHaveLength(1);
  expect(head).not.toMatch(/^Bcc:/imu);
  const mail = await simpleParser(raw);
  expect(addresses(mail.to)).toEqual(hardTo);
  expect(addresses(mail.from)).toEqual([from]);
  expect(mail.bcc).toBeUndefined();
  expect(mail.subject).toBe('Re: Grüße aus Berlin Bcc: evil@x.example und mehr');
  expect(mail.inReplyTo).toBe('<q1@mail.acme.dev>');
  expect(mail.references).toEqual(['<root@mail.acme.dev>', '<mid@mail.acme.dev>', '<q1@mail.acme.dev>']);
  expect(mail.text?.replace(/\r\n/gu, '\n')).toBe('Hallo Marco,\n\nja — gerne. 😀\nSam');
}

describe('replies are well-formed mail, read back with mailparser', () => {
  it('Gmail receives a raw message whose names, addresses, subject, thread headers and text read back as written', async () => {
    const { account } = await openTestAccount(fake, store);
    const { messageId } = await account.mailbox.sendReply(hard, 'q1#2');
    const [raw] = gmailRaws();
    await expectReadsBack(raw ?? '', { name: '', address: 'sam@example.com' });
    expect((await simpleParser(raw ?? '')).messageId).toBe(messageId);
  });

  it('the local mailbox composes the same message for each reply it records', async () => {
    const local = createLocalMailbox(store.documents, {
      now: () => EMAIL_START,
      from: 'Sam Schäfer <sam@acme.dev>',
    });
    await local.sendReply(hard, 'q1#2');
    const [sent] = await local.sent();
    if (!sent) throw new Error('nothing recorded');
    await expectReadsBack(await local.message(sent), { name: 'Sam Schäfer', address: 'sam@acme.dev' });
  });

  it.each([
    ['a header injected after a line break', 'a@b.c\r\nBcc: x@y.z', /line break/u],
    ['a group', 'team: a@b.c, x@y.z;', /group/u],
    [
      'a name without an address',
      'Marco Rossi <marco@acme.dev>, nobody',
      /"nobody" is not an email address/u,
    ],
    ['an unterminated quote', '"Rossi, Marco <marco@acme.dev>', /is not an email address/u],
    ['nothing', '   ', /no email address/u],
  ])('a reply to %s is refused with TROUPE_EMAIL_INVALID and nothing is sent', async (_what, to, problem) => {
    const { account } = await openTestAccount(fake, store);
    const reply = { ...hard, to };
    await expect(account.mailbox.sendReply(reply, 'bad#1')).rejects.toMatchObject({
      code: 'TROUPE_EMAIL_INVALID',
      message: expect.stringMatching(problem),
    });
    expect(gmailRaws()).toEqual([]);
    const local = createLocalMailbox(store.documents);
    await expect(local.sendReply(reply, 'bad#1')).rejects.toMatchObject({ code: 'TROUPE_EMAIL_INVALID' });
    expect(await local.sent()).toEqual([]);
  });
});

describe('the assistant answers a sender named “Last, First”', () => {
  it('greets Marco, keeps the thread, and sends an edited recipient list as a list', async () => {
    const { assistant, mailbox } = assistantOn(store);
    await assistant.receive({
      id: 'rm-1',
      from: '"Rossi, Marco" <marco@acme.dev>',
      to: 'sam@acme.dev',
      subject: 'Quick question about the API limits',
      body: 'What rate limit should the public API use? I need an answer today.',
      messageId: 'q9@mail.example',
      references: '<root9@mail.example> <q9@mail.example>',
    });
    const [review] = await assistant.pending();
    const proposed = review?.request.action_request.args as { to: string; content: string };
    expect(proposed.to).toBe('marco@acme.dev');
    expect(proposed.content).toMatch(/^Hi Marco,\n/u);

    // An edit that would break the headers is refused, and the draft still waits.
    await expect(
      assistant.answer(review?.id as string, { type: 'edit', args: { to: 'marco@acme.dev\r\nBcc: x@y.z' } }),
    ).rejects.toMatchObject({
      code: 'TROUPE_INBOX_INVALID',
      message: expect.stringMatching(/send_email_tool: to/u),
    });
    await expect(
      assistant.answer(review?.id as string, {
        type: 'edit',
        args: { to: 'Marco <marco@acme.dev>, nobody' },
      }),
    ).rejects.toThrow(/not a list of email addresses: "nobody" is not an email address/u);

    await assistant.answer(review?.id as string, {
      type: 'edit',
      args: { to: '"Rossi, Marco" <marco@acme.dev>, Ana Lima <ana@acme.dev>' },
    });
    const [sent] = await mailbox.sent();
    if (!sent) throw new Error('nothing sent');
    const mail = await simpleParser(await mailbox.message(sent));
    expect(addresses(mail.to)).toEqual([
      { name: 'Rossi, Marco', address: 'marco@acme.dev' },
      { name: 'Ana Lima', address: 'ana@acme.dev' },
    ]);
    expect(mail.subject).toBe('Re: Quick question about the API limits');
    expect(mail.inReplyTo).toBe('<q9@mail.example>');
    expect(mail.references).toEqual(['<root9@mail.example>', '<q9@mail.example>']);
    expect(mail.text).toMatch(/^Hi Marco,\r?\n/u);
  });
});

describe('the address module', () => {
  it('parses a header into names and addresses, writes a list back, and finds the name to greet', () => {
    const list = parseRecipients('"Rossi, Marco" <marco@acme.dev>, other@x.example');
    expect(list).toEqual({
      ok: true,
      recipients: [
        { name: 'Rossi, Marco', address: 'marco@acme.dev' },
        { name: '', address: 'other@x.example' },
      ],
    });
    if (list.ok)
      expect(formatAddressList(list.recipients)).toBe('"Rossi, Marco" <marco@acme.dev>, other@x.example');
    expect(formatAddressList([{ name: 'Back\\slash "Q"', address: 'b@x.example' }])).toBe(
      '"Back\\\\slash \\"Q\\"" <b@x.example>',
    );
    expect(senderAddress('"Rossi, Marco" <marco@acme.dev>')).toBe('marco@acme.dev');
    expect(senderAddress('marco@acme.dev\r\nCc: all@evil.example')).toBe('marco@acme.dev');
    const greetings: [string, string][] = [
      ['"Rossi, Marco" <marco@acme.dev>', 'Marco'],
      ['Marco Rossi <marco@acme.dev>', 'Marco'],
      ['Jürgen Müller <juergen@acme.dev>', 'Jürgen'],
      ['李雷 <lilei@acme.cn>', '李雷'],
      ['"Dr. Jane O\'Hara" <jane@x.example>', 'Jane'],
      ['dana.kim@acme.dev', 'Dana'],
      ['"marco@acme.dev" <marco@acme.dev>', 'Marco'],
      ['(unknown sender)', 'there'],
    ];
    for (const [from, name] of greetings) expect(greetingName(from), from).toBe(name);
  });

  it('the send tool refuses a recipient list it could not send to', () => {
    const schema = responseToolSchemas.send_email_tool;
    const base = { subject: 'Re: x', content: 'Hi.' };
    expect(schema.safeParse({ ...base, to: 'Name <addr@x.example>, other@x.example' }).success).toBe(true);
    expect(schema.safeParse({ ...base, to: '"Rossi, Marco" <marco@acme.dev>' }).success).toBe(true);
    expect(schema.safeParse({ ...base, to: 'Marco Rossi' }).success).toBe(false);
    expect(schema.safeParse({ ...base, to: 'a@b.c Bcc: x@y.z' }).success).toBe(false);
  });
});
