import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/clock.js';
import { EmailAssistant } from '../../../src/actors/email/emailAssistant.js';
import { replyMessageId } from '../../../src/adapters/gmail/gmailMailbox.js';
import { replySubject } from '../../../src/adapters/gmail/replyMime.js';
import { createMemoryStore } from '../../../src/adapters/store/memory/memoryStore.js';
import type { EmailReply } from '../../../src/ports/mailbox.js';
import type { TroupeStore } from '../../../src/ports/store.js';
import { decodeWords, type FakeGoogle, startFakeGoogle } from '../../support/fakeGoogle.js';
import { openTestAccount } from '../../support/gmailTestAccount.js';

let fake: FakeGoogle;
let store: TroupeStore;
beforeEach(async () => {
  fake = await startFakeGoogle();
  store = createMemoryStore();
});
afterEach(async () => {
  await fake.close();
});

const reply: EmailReply = {
  to: 'Jürgen Groß <juergen@acme.dev>',
  subject: 'Re: RE: Grüße und Fragen',
  content: 'Hallo Jürgen,\nja, gerne.\n— Sam',
  inReplyTo: '<q1@mail.acme.dev>',
  references: ['<root@mail.acme.dev>', '<q1@mail.acme.dev>'],
  threadId: 'thread-q1',
};

describe('Gmail mailbox: replies', () => {
  it('puts the reply in the thread with In-Reply-To, References, one “Re:” and an encoded UTF-8 subject', async () => {
    const { account } = await openTestAccount(fake, store);
    const result = await account.mailbox.sendReply(reply, 'q1#2');
    expect(result).toEqual({ messageId: replyMessageId('sam@example.com', 'q1#2') });

    const [sent] = fake.sent();
    expect(sent?.message.threadId).toBe('thread-q1');
    expect(fake.requests.find((r) => r.path.endsWith('/messages/send'))?.body).toMatchObject({
      threadId: 'thread-q1',
    });
    expect(sent?.header('in-reply-to')).toBe('<q1@mail.acme.dev>');
    expect(sent?.header('references')).toBe('<root@mail.acme.dev> <q1@mail.acme.dev>');
    expect(sent?.header('message-id')).toBe(result.messageId);
    expect(sent?.header('subject')).toMatch(/^=\?UTF-8\?B\?/u); // RFC 2047, not raw UTF-8
    expect(decodeWords(sent?.header('subject') ?? '')).toBe('Re: Grüße und Fragen');
    expect(decodeWords(sent?.header('to') ?? '')).toBe('Jürgen Groß <juergen@acme.dev>');
    expect(sent?.header('from')).toBe('sam@example.com');
    expect(Buffer.from(sent?.body ?? '', 'base64').toString('utf8')).toBe(
      'Hallo Jürgen,\r\nja, gerne.\r\n— Sam\r\n'.trimEnd(),
    );
  });

  it('“Re:” is added once, whatever the subject already had', () => {
    expect(replySubject('Lunch')).toBe('Re: Lunch');
    expect(replySubject('Re: Lunch')).toBe('Re: Lunch');
    expect(replySubject('RE: re: Lunch')).toBe('Re: Lunch');
    expect(replySubject('Re[2]: Lunch')).toBe('Re: Lunch');
  });

  it('a line break in a header (from a model or an email) cannot add a header', async () => {
    const { account } = await openTestAccount(fake, store);
    await account.mailbox.sendReply(
      { ...reply, subject: 'Hi\r\nBcc: evil@x.example', to: 'a@acme.dev' },
      'k',
    );
    const [sent] = fake.sent();
    expect(sent?.header('bcc')).toBeUndefined();
    expect(sent?.header('subject')).toBe('Re: Hi Bcc: evil@x.example');
  });

  it('the same key again returns the first send, marked duplicate', async () => {
    const { account } = await openTestAccount(fake, store);
    const first = await account.mailbox.sendReply(reply, 'q1#2');
    const again = await account.mailbox.sendReply(reply, 'q1#2');
    expect(again).toEqual({ messageId: first.messageId, duplicate: true });
    expect(fake.sent()).toHaveLength(1);
  });

  it('no double send after a crash between the send and the local record: the resend finds the first in Sent', async () => {
    const { account } = await openTestAccount(fake, store);
    const put = store.documents.put.bind(store.documents);
    let crash = true;
    store.documents.put = async (collection, key, value, options) => {
      if (collection === 'gmail-sent' && crash) {
        crash = false;
        throw new Error('process died here');
      }
      return put(collection, key, value, options);
    };
    await expect(account.mailbox.sendReply(reply, 'q1#2')).rejects.toThrow('process died here');
    expect(fake.sent()).toHaveLength(1);

    const restarted = await openTestAccount(fake, store);
    const again = await restarted.account.mailbox.sendReply(reply, 'q1#2');
    expect(again).toEqual({ messageId: replyMessageId('sam@example.com', 'q1#2'), duplicate: true });
    expect(fake.sent()).toHaveLength(1);
    const search = fake.requests.filter((r) => r.path.endsWith('/messages') && r.query.q);
    expect(search.at(-1)?.query).toMatchObject({
      q: `rfc822msgid:${again.messageId.slice(1, -1)}`,
      labelIds: 'SENT',
    });
  });

  it('a send Gmail carried out but answered with a 500 is retried without a second copy', async () => {
    const { account, waits } = await openTestAccount(fake, store);
    fake.inject({ method: 'POST', path: /\/messages\/send$/u, status: 500, actThenFail: true });
    const result = await account.mailbox.sendReply(reply, 'q1#2');
    expect(result.duplicate).toBe(true);
    expect(fake.sent()).toHaveLength(1);
    expect(waits).toEqual([1_000]);
  });
});

describe('Gmail mailbox: closing emails, through the email assistant', () => {
  function fillInbox() {
    fake.addEmail({
      id: 'n1',
      from: 'The Weekly Byte <newsletter@bytes.example>',
      subject: 'This week in JavaScript',
      text: 'Top stories.',
    });
    fake.addEmail({
      id: 's1',
      from: 'Jordan <jordan@acme.dev>',
      subject: 'Project Atlas status update',
      text: 'FYI: Atlas is on track. No action items.',
    });
    fake.addEmail({
      id: 'q1',
      threadId: 'thread-q1',
      from: 'Marco Rossi <marco@acme.dev>',
      subject: 'API limits',
      text: 'What rate limit should the public API use?',
      messageId: '<q1@mail.acme.dev>',
    });
  }

  /** The assistant on the Gmail account, every email of the inbox received. */
  async function assistantOnGmail(markRead?: 'answered' | 'never' | 'always') {
    const { account } = await openTestAccount(fake, store, markRead ? { markRead } : {});
    const assistant = new EmailAssistant({
      store,
      mailbox: account.mailbox,
      calendar: account.calendar,
      clock: new SimulatedClock(Date.parse('2026-11-25T09:00:00Z')),
      userName: 'Sam',
      timeZone: 'Europe/Berlin',
    });
    await account.ingest.poll((input) => assistant.receive(input));
    return { account, assistant };
  }

  const labelNamed = (id: string) =>
    fake.messages.get(id)?.labelIds.map((l) => fake.labels.find((x) => x.id === l)?.name ?? l);

  it('an ignored email stays unread (labelled Troupe/Ignored); a notify answered and a sent reply are marked read; the label is created once', async () => {
    fillInbox();
    const { account, assistant } = await assistantOnGmail();

    // Triaged ignore: nobody saw it, so it stays in Unread.
    expect((await assistant.record('n1'))?.state.value).toBe('done');
    expect(labelNamed('n1')).toEqual(['INBOX', 'UNREAD', 'Troupe/Ignored']);
    // A notify waiting for the person: untouched until answered.
    expect(fake.messages.get('s1')?.labelIds).toEqual(['INBOX', 'UNREAD']);
    const notify = (await assistant.pendingFor('s1'))[0];
    await assistant.answer(notify?.id ?? '', { type: 'ignore' });
    expect(labelNamed('s1')).toEqual(['INBOX', 'Troupe/Notify']);

    const draft = (await assistant.pendingFor('q1'))[0];
    expect(fake.messages.get('q1')?.labelIds).toContain('UNREAD'); // waiting for the human: untouched
    await assistant.answer(draft?.id ?? '', { type: 'accept' });
    expect(labelNamed('q1')).toEqual(['INBOX', 'Troupe/Answered']);
    const [sent] = fake.sent();
    expect(sent?.message.threadId).toBe('thread-q1');
    expect(sent?.header('in-reply-to')).toBe('<q1@mail.acme.dev>');

    // Closing again changes nothing and creates no label.
    const creates = () =>
      fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/labels')).length;
    const before = creates();
    await account.mailbox.close('n1', 'ignored', { seenByPerson: false });
    expect(labelNamed('n1')).toEqual(['INBOX', 'UNREAD', 'Troupe/Ignored']);
    expect(creates()).toBe(before);
    expect(fake.labels.filter((l) => l.name === 'Troupe/Ignored')).toHaveLength(1);
  });

  it('a reply sent without any review (the person never answered) still marks the email read', async () => {
    fake.addEmail({ id: 'r1', from: 'ana@acme.dev', subject: 'Hello', text: 'x' });
    const { account } = await openTestAccount(fake, store);
    // What the assistant passes when a send step went out: seen, whatever was answered.
    await account.mailbox.close('r1', 'answered', { seenByPerson: true });
    expect(labelNamed('r1')).toEqual(['INBOX', 'Troupe/Answered']);
    await account.mailbox.close('r1', 'answered');
    expect(labelNamed('r1')).toEqual(['INBOX', 'Troupe/Answered']); // never marked unread again
  });

  it('TROUPE_GMAIL_MARK_READ=never leaves even answered emails unread; always marks ignored ones read too', async () => {
    fillInbox();
    const never = await assistantOnGmail('never');
    const notify = (await never.assistant.pendingFor('s1'))[0];
    await never.assistant.answer(notify?.id ?? '', { type: 'ignore' });
    const draft = (await never.assistant.pendingFor('q1'))[0];
    await never.assistant.answer(draft?.id ?? '', { type: 'accept' });
    expect(labelNamed('n1')).toEqual(['INBOX', 'UNREAD', 'Troupe/Ignored']);
    expect(labelNamed('s1')).toEqual(['INBOX', 'UNREAD', 'Troupe/Notify']);
    expect(labelNamed('q1')).toEqual(['INBOX', 'UNREAD', 'Troupe/Answered']);

    await fake.close();
    fake = await startFakeGoogle();
    store = createMemoryStore();
    fake.addEmail({
      id: 'n1',
      from: 'The Weekly Byte <newsletter@bytes.example>',
      subject: 'News',
      text: 'x',
    });
    await assistantOnGmail('always');
    expect(labelNamed('n1')).toEqual(['INBOX', 'Troupe/Ignored']);
  });

  it('Troupe/Notify marks a notify email waiting for the person, and stays unread; a failure to label is only logged', async () => {
    fake.addEmail({ id: 's1', from: 'jordan@acme.dev', subject: 'Status', text: 'FYI' });
    fake.addEmail({ id: 's2', from: 'jordan@acme.dev', subject: 'Status 2', text: 'FYI' });
    const { account } = await openTestAccount(fake, store);
    await account.mailbox.labelNotify('s1');
    await account.mailbox.labelNotify('s1');
    expect(labelNamed('s1')).toEqual(['INBOX', 'UNREAD', 'Troupe/Notify']);
    fake.inject({ path: /\/messages\/s2\/modify$/u, status: 400 });
    await expect(account.mailbox.labelNotify('s2')).resolves.toBeUndefined();
    expect(labelNamed('s2')).toEqual(['INBOX', 'UNREAD']);
  });

  it('a label made elsewhere is found by name in any case, not created again', async () => {
    fake.labels.push({ id: 'Label_77', name: 'Troupe/ignored', type: 'user' });
    fake.addEmail({ id: 'n1', from: 'newsletter@bytes.example', subject: 'News', text: 'x' });
    const { account } = await openTestAccount(fake, store);
    await account.mailbox.close('n1', 'ignored');
    expect(fake.messages.get('n1')?.labelIds).toEqual(['INBOX', 'UNREAD', 'Label_77']);
    expect(fake.requests.some((r) => r.method === 'POST' && r.path.endsWith('/labels'))).toBe(false);
  });
});
