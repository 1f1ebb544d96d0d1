import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GmailEmailInput } from '../../../src/adapters/gmail/gmailMessage.js';
import { readSyncStatus } from '../../../src/adapters/gmail/gmailSyncStatus.js';
import { createMemoryStore } from '../../../src/adapters/store/memory/memoryStore.js';
import { parseEmail } from '../../../src/email/emailInput.js';
import type { TroupeStore } from '../../../src/ports/store.js';
import { type FakeGoogle, startFakeGoogle } from '../../support/fakeGoogle.js';
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

/** Collects what the ingest hands over. */
function collector() {
  const got: GmailEmailInput[] = [];
  return { got, onMessage: async (input: GmailEmailInput) => void got.push(input) };
}

describe('Gmail ingest (real googleapis against the fake)', () => {
  it('reads the inbox in full on the first run, then only what is new through the history', async () => {
    fake.addEmail({ from: 'Ana <ana@acme.dev>', subject: 'First', text: 'one' });
    fake.addEmail({ from: 'Ben <ben@acme.dev>', subject: 'Second', text: 'two' });
    const { account } = await openTestAccount(fake, store);
    const { got, onMessage } = collector();

    const first = await account.ingest.poll(onMessage);
    expect(first.mode).toBe('full');
    expect(got.map((g) => g.subject)).toEqual(['First', 'Second']); // oldest first
    const list = fake.requests.find((r) => r.path.endsWith('/messages') && r.method === 'GET');
    expect(list?.query).toMatchObject({ labelIds: 'INBOX', q: 'newer_than:7d' });
    expect(await account.ingest.cursor()).toBe(first.historyId);

    fake.addEmail({ from: 'Cy <cy@acme.dev>', subject: 'Third', text: 'three' });
    const second = await account.ingest.poll(onMessage);
    expect(second.mode).toBe('history');
    expect(got.map((g) => g.subject)).toEqual(['First', 'Second', 'Third']);
    const historyCall = fake.requests.find((r) => r.path.endsWith('/history'));
    expect(historyCall?.query).toMatchObject({
      startHistoryId: first.historyId,
      historyTypes: 'messageAdded',
      labelId: 'INBOX',
    });
    expect(await account.ingest.cursor()).toBe(String(fake.historyId));
  });

  it('hands over the Gmail input shape the assistant reads: headers, thread, text from the plain part', async () => {
    fake.addEmail({
      id: 'g1',
      threadId: 'thread-9',
      from: 'Marco Rossi <marco@acme.dev>',
      subject: 'Grüße aus Berlin',
      text: 'Plain text wins. ✓',
      html: '<p>HTML loses</p>',
      messageId: '<g1@mail.acme.dev>',
      references: '<root@mail.acme.dev> <mid@mail.acme.dev>',
      date: 'Tue, 24 Nov 2026 16:00:00 +0100',
      labelIds: ['INBOX', 'UNREAD', 'IMPORTANT'],
    });
    fake.addEmail({
      id: 'g2',
      from: 'html@acme.dev',
      subject: 'HTML only',
      html: '<html><head><style>p{}</style></head><body><p>Hello &amp; welcome</p><script>x()</script><div>Line two</div></body></html>',
    });
    const { account } = await openTestAccount(fake, store);
    const { got, onMessage } = collector();
    await account.ingest.poll(onMessage);

    expect(got[0]).toEqual({
      id: 'g1',
      threadId: 'thread-9',
      from: 'Marco Rossi <marco@acme.dev>',
      to: 'sam@example.com',
      subject: 'Grüße aus Berlin',
      body: 'Plain text wins. ✓',
      date: 'Tue, 24 Nov 2026 16:00:00 +0100',
      labelIds: ['INBOX', 'UNREAD', 'IMPORTANT'],
      messageId: '<g1@mail.acme.dev>',
      references: ['<root@mail.acme.dev>', '<mid@mail.acme.dev>'],
    });
    expect(got[1]?.body).toBe('Hello & welcome\n\nLine two');
    // And the assistant's parser takes both as Gmail emails.
    for (const input of got)
      expect(parseEmail(input)).toMatchObject({ ok: true, email: { source: 'gmail' } });
  });

  it('processes a message that was already read in Gmail (no UNREAD label) like any other', async () => {
    fake.addEmail({
      id: 'read-1',
      from: 'a@acme.dev',
      subject: 'Already read',
      text: 'x',
      labelIds: ['INBOX'],
    });
    const { account } = await openTestAccount(fake, store);
    const { got, onMessage } = collector();
    await account.ingest.poll(onMessage);
    expect(got.map((g) => g.id)).toEqual(['read-1']);
  });

  it('after a restart (a new adapter on the same store) nothing is handed over twice', async () => {
    fake.addEmail({ id: 'a', from: 'a@acme.dev', subject: 'A', text: 'a' });
    const before = await openTestAccount(fake, store);
    const { got, onMessage } = collector();
    await before.account.ingest.poll(onMessage);
    fake.addEmail({ id: 'b', from: 'b@acme.dev', subject: 'B', text: 'b' });

    const after = await openTestAccount(fake, store);
    await after.account.ingest.poll(onMessage);
    await after.account.ingest.poll(onMessage);
    expect(got.map((g) => g.id)).toEqual(['a', 'b']);
  });

  it('a crash while handing over reads the page again and skips what was handed over', async () => {
    fake.addEmail({ id: 'a', from: 'a@acme.dev', subject: 'A', text: 'a' });
    const { account } = await openTestAccount(fake, store);
    await account.ingest.poll(async () => {});
    const cursor = await account.ingest.cursor();
    fake.addEmail({ id: 'b', from: 'b@acme.dev', subject: 'B', text: 'b' });
    fake.addEmail({ id: 'c', from: 'c@acme.dev', subject: 'C', text: 'c' });
    const got: string[] = [];
    await expect(
      account.ingest.poll(async (input) => {
        if (input.id === 'c') throw new Error('crash');
        got.push(input.id);
      }),
    ).rejects.toThrow('crash');
    expect(await account.ingest.cursor()).toBe(cursor); // not moved past what was not handed over
    await account.ingest.poll(async (input) => void got.push(input.id));
    expect(got).toEqual(['b', 'c']);
  });

  it('a cursor Gmail no longer has (404) falls back to reading the inbox, without handing anything over twice', async () => {
    fake.addEmail({ id: 'a', from: 'a@acme.dev', subject: 'A', text: 'a' });
    // The fake's emails are dated 2026-11-25 08:00 UTC; the adapter's clock an hour later.
    const { account } = await openTestAccount(fake, store, { now: () => Date.parse('2026-11-25T09:00:00Z') });
    const { got, onMessage } = collector();
    await account.ingest.poll(onMessage);
    fake.addEmail({ id: 'b', from: 'b@acme.dev', subject: 'B', text: 'b' });
    fake.minHistoryId = fake.historyId; // everything before now is gone

    const result = await account.ingest.poll(onMessage);
    expect(result.mode).toBe('resync');
    expect(result.skipped).toBe(1);
    expect(got.map((g) => g.id)).toEqual(['a', 'b']);
    expect(fake.requests.some((r) => r.path.endsWith('/history'))).toBe(true);
  });

  it('a resync reads everything received since a day before the cursor was stored: mail in a long gap is not lost', async () => {
    let now = Date.parse('2026-11-25T09:00:00Z');
    fake.now = now;
    fake.addEmail({
      id: 'a',
      from: 'a@acme.dev',
      subject: 'A',
      text: 'a',
      date: 'Wed, 25 Nov 2026 08:00:00 +0000',
    });
    const { account } = await openTestAccount(fake, store, { now: () => now });
    const { got, onMessage } = collector();
    expect((await account.ingest.poll(onMessage)).mode).toBe('full');
    // Ten days without a pass: Gmail dropped the history, and b is older than the sync query's 7 days.
    fake.addEmail({
      id: 'b',
      from: 'b@acme.dev',
      subject: 'B',
      text: 'b',
      date: 'Thu, 26 Nov 2026 10:00:00 +0000',
    });
    fake.addEmail({
      id: 'c',
      from: 'c@acme.dev',
      subject: 'C',
      text: 'c',
      date: 'Sat, 05 Dec 2026 10:00:00 +0000',
    });
    now = Date.parse('2026-12-06T09:00:00Z');
    fake.now = now;
    fake.minHistoryId = fake.historyId;

    const result = await account.ingest.poll(onMessage);
    expect(result).toMatchObject({ mode: 'resync', handed: ['b', 'c'], skipped: 1 });
    expect(got.map((g) => g.id)).toEqual(['a', 'b', 'c']);
    const lists = fake.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/messages'));
    expect(lists.at(-1)?.query.q).toBe(`after:${Date.parse('2026-11-24T09:00:00Z') / 1000}`);
    expect(await readSyncStatus(store.documents)).toMatchObject({
      lastSuccessAt: now,
      lastResyncAt: now,
      lastPass: { mode: 'resync', handed: 2, skipped: 1 },
    });
    // Back on the history: the next pass reads only what is new.
    fake.addEmail({
      id: 'd',
      from: 'd@acme.dev',
      subject: 'D',
      text: 'd',
      date: 'Sun, 06 Dec 2026 10:00:00 +0000',
    });
    expect(await account.ingest.poll(onMessage)).toMatchObject({
      mode: 'history',
      handed: ['d'],
      skipped: 0,
    });
  });

  it('keeps the sync status: the last pass that went through, and the last failure with its code', async () => {
    let now = Date.parse('2026-11-25T09:00:00Z');
    fake.addEmail({ id: 'a', from: 'a@acme.dev', subject: 'A', text: 'a' });
    const { account } = await openTestAccount(fake, store, { now: () => now });
    expect(await readSyncStatus(store.documents)).toBeUndefined();
    const first = await account.ingest.poll(async () => {});
    expect(await readSyncStatus(store.documents)).toEqual({
      address: 'sam@example.com',
      lastSuccessAt: now,
      lastPass: { mode: 'full', handed: 1, skipped: 0, historyId: first.historyId },
    });
    now += 60_000;
    fake.inject({ path: /\/history$/u, status: 503, times: 10 });
    await expect(account.ingest.poll(async () => {})).rejects.toMatchObject({
      code: 'TROUPE_GMAIL_UNAVAILABLE',
    });
    const failed = await readSyncStatus(store.documents);
    expect(failed?.lastSuccessAt).toBe(now - 60_000);
    expect(failed?.lastError).toMatchObject({ code: 'TROUPE_GMAIL_UNAVAILABLE', at: now });

    fake.revokeRefreshToken('REFRESHTOKEN-1');
    fake.refuseAccessTokens();
    now += 60_000;
    await expect(openTestAccount(fake, store, { now: () => now })).rejects.toMatchObject({
      code: 'TROUPE_GMAIL_AUTH',
    });
    expect((await readSyncStatus(store.documents))?.lastError).toMatchObject({
      code: 'TROUPE_GMAIL_AUTH',
      at: now,
    });
  });

  it('tells how far the cursor is behind without handing anything over', async () => {
    const { account } = await openTestAccount(fake, store);
    expect(await account.ingest.behind()).toEqual({ state: 'no-cursor' });
    await account.ingest.poll(async () => {});
    const cursor = await account.ingest.cursor();
    expect(await account.ingest.behind()).toMatchObject({ state: 'known', count: 0, more: false });
    fake.addEmail({ id: 'x', from: 'x@acme.dev', subject: 'X', text: 'x' });
    fake.addEmail({ id: 'y', from: 'y@acme.dev', subject: 'Y', text: 'y' });
    expect(await account.ingest.behind()).toEqual({
      state: 'known',
      cursor,
      count: 2,
      more: false,
      mailboxHistoryId: String(fake.historyId),
    });
    expect(fake.requests.some((r) => r.path.endsWith('/messages/x'))).toBe(false);
    fake.minHistoryId = fake.historyId;
    expect(await account.ingest.behind()).toEqual({ state: 'too-old', cursor });
  });

  it('reads every page of a long history', async () => {
    const { account } = await openTestAccount(fake, store);
    await account.ingest.poll(async () => {});
    fake.pageSize = 2;
    for (const id of ['p1', 'p2', 'p3', 'p4', 'p5'])
      fake.addEmail({ id, from: 'x@acme.dev', subject: id, text: id });
    const { got, onMessage } = collector();
    await account.ingest.poll(onMessage);
    expect(got.map((g) => g.id)).toEqual(['p1', 'p2', 'p3', 'p4', 'p5']);
    expect(fake.requests.filter((r) => r.path.endsWith('/history'))).toHaveLength(3);
  });
});
