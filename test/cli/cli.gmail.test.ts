import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { type FakeGoogle, startFakeGoogle } from '../support/fakeGoogle.js';
import { runTroupe } from '../support/runTroupe.js';
import { studioClient } from '../support/studioClient.js';

const troupe = (args: string[], env: Record<string, string>, stopWhen?: RegExp) =>
  runTroupe(args, env, stopWhen ? { stopWhen } : {});

let fake: FakeGoogle;
let env: Record<string, string>;
beforeEach(async () => {
  fake = await startFakeGoogle({ address: 'sam@acme.dev' });
  env = {
    TROUPE_DATA_DIR: await mkdtemp(join(tmpdir(), 'troupe-gmail-cli-')),
    TROUPE_EMAIL_NOW: '2026-11-25T09:00:00Z',
    TROUPE_EMAIL_TIME_ZONE: 'Europe/Berlin',
    LOG_LEVEL: 'silent',
    GOOGLE_CLIENT_ID: 'client-1.apps.googleusercontent.com',
    GOOGLE_CLIENT_SECRET: 'CLIENTSECRET-c11',
    GOOGLE_REFRESH_TOKEN: 'REFRESHTOKEN-c11',
    GOOGLE_API_URL: fake.url,
    GOOGLE_TOKEN_URL: fake.tokenUrl,
  };
});
afterEach(async () => {
  await fake.close();
});

function fillInbox() {
  fake.addEmail({
    id: 'n1',
    from: 'The Weekly Byte <newsletter@bytes.example>',
    subject: 'This week in JavaScript',
    text: 'Top stories.',
  });
  fake.addEmail({
    id: 'q1',
    threadId: 'thread-q1',
    from: 'Marco Rossi <marco@acme.dev>',
    subject: 'API limits',
    text: 'What rate limit should the public API use?',
    messageId: '<q1@mail.acme.dev>',
  });
  fake.addEmail({
    id: 'm1',
    from: 'Ben <ben@customer.example>',
    subject: 'Meeting next week?',
    text: 'Would you have 30 minutes for a call?',
  });
}

describe('troupe email on Gmail (the real googleapis client against the fake)', () => {
  it('ingests from Gmail, labels what it closes, replies in the thread and books through Calendar', async () => {
    fillInbox();
    const first = await troupe(['email'], env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^Email assistant — Gmail sam@acme\.dev, model: offline/mu);
    expect(first.stdout).toMatch(
      /n1 “This week in JavaScript”[\s\S]*?IGNORE \(rule\)[\s\S]*?now: done — ignored/u,
    );
    expect(first.stdout).toMatch(/q1 “API limits”[\s\S]*?waiting for you \(q1#1\)/u);
    expect(first.stdout).toMatch(/m1 “Meeting next week\?”[\s\S]*?waiting for you \(m1#1\)/u);
    // Ignored without anyone seeing it: labelled, and still unread in Gmail.
    const troupeLabel = fake.labels.find((l) => l.name === 'Troupe/Ignored');
    expect(fake.messages.get('n1')?.labelIds).toEqual(['INBOX', 'UNREAD', troupeLabel?.id]);
    // The meeting's availability was read from Calendar, for the next working day in Berlin.
    expect(fake.requests.find((r) => r.path === '/calendar/v3/freeBusy')?.body).toMatchObject({
      timeMin: '2026-11-26T00:00:00+01:00',
      timeZone: 'Europe/Berlin',
    });

    const again = await troupe(['email'], env);
    expect(again.stdout).toContain('No new email (each is processed once; state is kept in the store).');
    expect(again.stdout).toContain('Waiting for you (2)');

    const sent = await troupe(['inbox', 'answer', 'q1#1', 'accept'], env);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain(
      'Sent to marco@acme.dev: “Re: API limits” (in reply to <q1@mail.acme.dev>)',
    );
    expect(sent.stdout).toContain('now: done — answered');
    // The person accepted the reply: the email is read now.
    expect(fake.messages.get('q1')?.labelIds).not.toContain('UNREAD');
    const [reply] = fake.sent();
    expect(reply?.message.threadId).toBe('thread-q1');
    expect(reply?.header('in-reply-to')).toBe('<q1@mail.acme.dev>');

    const booked = await troupe(['inbox', 'answer', 'm1#1', 'accept'], env);
    expect(booked.stdout).toContain('Booked “Meeting next week?” on 2026-11-26 at 09:00 (Europe/Berlin');
    const insert = fake.requests.find((r) => r.path.endsWith('/events'));
    expect(insert?.query).toEqual({ sendUpdates: 'all' });
    expect(fake.events.size).toBe(1);

    fake.addEmail({ id: 'n2', from: 'newsletter@bytes.example', subject: 'Issue 2', text: 'More.' });
    const third = await troupe(['email'], env);
    expect(third.stdout).toContain('n2 “Issue 2”');
    expect(third.stdout).not.toContain('q1 “API limits”');
  });

  it('an email whose label Gmail kept refusing is closed on the next run', async () => {
    fake.addEmail({ id: 'n1', from: 'newsletter@bytes.example', subject: 'News', text: 'x' });
    fake.inject({ path: /\/messages\/n1\/modify$/u, status: 503, headers: { 'retry-after': '0' }, times: 5 });
    const first = await troupe(['email'], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /n1 “News”[\s\S]*now: closing\n {4}the last try failed \(TROUPE_GMAIL_UNAVAILABLE: .+\); it is tried again on the next run/u,
    );
    expect(fake.messages.get('n1')?.labelIds).toContain('UNREAD');

    const second = await troupe(['email'], env);
    expect(second.code).toBe(0);
    expect(fake.messages.get('n1')?.labelIds).toEqual([
      'INBOX',
      'UNREAD',
      fake.labels.find((l) => l.name === 'Troupe/Ignored')?.id,
    ]);
  });

  it('a notify email waits labelled Troupe/Notify and unread; answering it marks it read', async () => {
    fake.addEmail({
      id: 's1',
      from: 'Jordan <jordan@acme.dev>',
      subject: 'Project Atlas status update',
      text: 'FYI: Atlas is on track. No action items.',
    });
    const first = await troupe(['email'], env);
    expect(first.stdout).toMatch(/s1 “Project Atlas status update”[\s\S]*?waiting for you \(s1#1\)/u);
    const notify = fake.labels.find((l) => l.name === 'Troupe/Notify');
    expect(fake.messages.get('s1')?.labelIds).toEqual(['INBOX', 'UNREAD', notify?.id]);
    const answered = await troupe(['inbox', 'answer', 's1#1', 'ignore'], env);
    expect(answered.code).toBe(0);
    expect(fake.messages.get('s1')?.labelIds).toEqual(['INBOX', notify?.id]);
  });

  it('--status shows the last successful sync, the cursor, the messages behind, the failed emails and the last error', async () => {
    const none = await troupe(['email', '--status'], env);
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('  last successful sync: never');
    expect(none.stdout).toContain('  messages behind: none read yet: the first pass reads the inbox');

    fillInbox();
    await troupe(['email'], env);
    fake.addEmail({ id: 'n2', from: 'newsletter@bytes.example', subject: 'Issue 2', text: 'More.' });
    fake.addEmail({ id: 'n3', from: 'newsletter@bytes.example', subject: 'Issue 3', text: 'More.' });
    // Gmail refuses the reply for good: the email ends failed, with why.
    fake.inject({ method: 'POST', path: /\/messages\/send$/u, status: 400, times: 5 });
    await troupe(['inbox', 'answer', 'q1#1', 'accept'], env);
    const status = await troupe(['email', '--status'], env);
    expect(status.stderr).toBe('');
    expect(status.code).toBe(0);
    const cursor = /cursor \(history id\): (\d+)/u.exec(status.stdout)?.[1];
    expect(Number(cursor)).toBeGreaterThan(1000);
    expect(status.stdout).toContain(
      [
        'Gmail: sam@acme.dev',
        '  last successful sync: 2026-11-25T09:00:00.000Z (full: 3 new, 0 seen before)',
        `  cursor (history id): ${cursor}`,
        `  messages behind: 2 new in the inbox since the cursor (the mailbox is at history id ${fake.historyId})`,
        '  last error: none',
        'Failed emails (1):',
      ].join('\n'),
    );
    expect(status.stdout).toMatch(
      / {2}q1 “API limits” from Marco Rossi <marco@acme\.dev> — TROUPE_GMAIL_FAILED: .+/u,
    );
    // Reading the status handed nothing over.
    expect(fake.requests.some((r) => r.path.endsWith('/messages/n2'))).toBe(false);

    fake.revokeRefreshToken('REFRESHTOKEN-c11');
    expect((await troupe(['email'], env)).code).toBe(2);
    const refused = await troupe(['email', '--status'], env);
    expect(refused.code).toBe(0);
    expect(refused.stdout).toContain('  last successful sync: 2026-11-25T09:00:00.000Z');
    expect(refused.stdout).toMatch(/messages behind: unknown \(could not connect: TROUPE_GMAIL_AUTH: /u);
    expect(refused.stdout).toMatch(
      /last error: 2026-11-25T09:00:00\.000Z TROUPE_GMAIL_AUTH: .*run `troupe gmail auth`/u,
    );
    expect(refused.stdout).not.toMatch(/REFRESHTOKEN-c11|CLIENTSECRET-c11/u);
  });

  it('--watch keeps polling until Ctrl-C', async () => {
    fillInbox();
    const watched = await troupe(
      ['email', '--watch'],
      { ...env, TROUPE_GMAIL_POLL_SECONDS: '30' },
      /Waiting for you/u,
    );
    expect(watched.code).toBe(0);
    expect(watched.stdout).toContain('Email assistant — Gmail sam@acme.dev (every 30 s until Ctrl-C)');
    expect(watched.stdout).toContain('Waiting for you (2)');
    expect(watched.stdout).toMatch(/Stopped\.\n$/u);
  });

  it('--watch --studio serves the studio over the watching assistant: an answer on the page goes to Gmail and the store', async () => {
    fillInbox();
    let answered: Promise<void> | undefined;
    const studioAnswer = async (stdout: string) => {
      const { api } = studioClient(stdout);
      const state = (await api('state')).body as { interrupts: { id: string }[] };
      const q1 = state.interrupts.find((i) => i.id.startsWith('q1'));
      const response = await api(`inbox/${encodeURIComponent(q1?.id ?? 'none')}/answer`, { type: 'accept' });
      expect(response.status).toBe(200);
    };
    let stop: (signal: string) => void = () => undefined;
    const stopped = new Promise<string>((resolve) => {
      stop = resolve;
    });
    let stdout = '';
    const code = runCli(['email', '--watch', '--studio'], {
      stdout: (t) => {
        stdout += t;
        if (!answered && /Waiting for you/u.test(stdout))
          answered = studioAnswer(stdout).finally(() => stop('SIGINT'));
      },
      stderr: () => undefined,
      env: { ...env, TROUPE_GMAIL_POLL_SECONDS: '30' },
      isTTY: false,
      stopSignal: () => stopped,
    });
    expect(await code).toBe(0);
    await answered;
    expect(stdout).toMatch(/Troupe Studio: http:\/\/127\.0\.0\.1:\d+\/#token=/u);
    // The reply the page accepted was sent through Gmail, and the store no longer has it waiting.
    expect(fake.sent().map((m) => m.message.threadId)).toContain('thread-q1');
    const listed = await troupe(['inbox', 'list'], env);
    expect(listed.stdout).not.toMatch(/\bq1#/u);
  });

  it('a revoked refresh token is TROUPE_GMAIL_AUTH with how to get a new one, exit 2, and no secret printed', async () => {
    fake.revokeRefreshToken('REFRESHTOKEN-c11');
    const result = await troupe(['email'], { ...env, LOG_LEVEL: 'debug' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error TROUPE_GMAIL_AUTH: Google refused the Gmail credentials/u);
    expect(result.stderr).toContain('run `troupe gmail auth`');
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/REFRESHTOKEN-c11|CLIENTSECRET-c11/u);
  });

  it('incomplete credentials name every missing variable; --watch without Gmail says what to set', async () => {
    const partial = await troupe(['email'], {
      ...env,
      GOOGLE_CLIENT_SECRET: '',
      GOOGLE_REFRESH_TOKEN: '',
      TROUPE_GMAIL_POLL_SECONDS: '1',
    });
    expect(partial.code).toBe(2);
    expect(partial.stderr).toContain('TROUPE_GMAIL_POLL_SECONDS="1"');
    const markRead = await troupe(['email'], { ...env, TROUPE_GMAIL_MARK_READ: 'sometimes' });
    expect(markRead.code).toBe(2);
    expect(markRead.stderr).toMatch(
      /^error TROUPE_CONFIG_INVALID: [\s\S]*TROUPE_GMAIL_MARK_READ="sometimes"/u,
    );
    const missing = await troupe(['email'], { ...env, GOOGLE_CLIENT_SECRET: '', GOOGLE_REFRESH_TOKEN: '' });
    expect(missing.stderr).toContain('GOOGLE_CLIENT_SECRET');
    expect(missing.stderr).toContain('GOOGLE_REFRESH_TOKEN');

    const local = await troupe(['email', '--watch'], {
      TROUPE_DATA_DIR: env.TROUPE_DATA_DIR as string,
      LOG_LEVEL: 'silent',
    });
    expect(local.code).toBe(2);
    expect(local.stderr).toContain('--watch polls Gmail');
  });
});
