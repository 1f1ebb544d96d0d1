import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTroupe } from '../support/runTroupe.js';

const troupe = (args: string[], env: Record<string, string>) => runTroupe(args, env);

describe('troupe email and troupe inbox, on the sample mailbox', () => {
  it('triages the sample mailbox, keeps state between runs, and answers interrupts from the terminal', async () => {
    const env = {
      TROUPE_DATA_DIR: await mkdtemp(join(tmpdir(), 'troupe-email-')),
      TROUPE_EMAIL_NOW: '2026-11-25T09:00:00Z',
      TROUPE_EMAIL_TIME_ZONE: 'Europe/Berlin',
      LOG_LEVEL: 'silent',
    };
    const first = await troupe(['email'], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^Email assistant — mailbox .*sample-mailbox\.jsonl, model: offline/mu);
    expect(first.stdout).toContain('IGNORE (rule): Rule: the sender contains “newsletter”');
    expect(first.stdout).toMatch(
      /sample-02 “Project Atlas status update”[\s\S]*?NOTIFY \(offline\)[\s\S]*?waiting for you \(sample-02#1\)/u,
    );
    expect(first.stdout).toMatch(/sample-04 “Meeting next week\?”[\s\S]*?now: responding\.reviewing/u);
    expect(first.stdout).toContain('Waiting for you (6)');

    const again = await troupe(['email'], env);
    expect(again.stdout).toContain('No new email (each is processed once; state is kept in the store).');
    expect(again.stdout).toContain('Waiting for you (6)');

    const ignored = await troupe(['inbox', 'answer', 'sample-02#1', 'ignore'], env);
    expect(ignored.code).toBe(0);
    expect(ignored.stdout).toContain(
      'Learned (email_assistant/triage_preferences, version 2): Added under Ignore: emails like “Project Atlas status update” from jordan@acme.dev.',
    );
    expect(ignored.stdout).toContain('now: done — notified');

    const feedback = await troupe(
      ['inbox', 'answer', 'sample-03#1', 'response', 'use', '100', 'requests', 'per', 'minute'],
      env,
    );
    expect(feedback.stdout).toMatch(/waiting for you \(sample-03#2\)/u);
    const sent = await troupe(['inbox', 'answer', 'sample-03#2', 'accept'], env);
    expect(sent.stdout).toContain(
      'Sent to marco@acme.dev: “Re: Quick question about the API limits” (in reply to <sample-03@mail.example>)',
    );
    expect(sent.stdout).toContain('now: done — answered');

    const booked = await troupe(['inbox', 'answer', 'sample-04#1', 'accept'], env);
    expect(booked.stdout).toContain(
      'Booked “Meeting next week?” on 2026-11-26 at 09:00 (Europe/Berlin, 30 min) with ben@customer.example',
    );
    // Once booked, the short reply saying so waits for review; accepted, the email is done.
    expect(booked.stdout).toMatch(
      /sample-04#2 {2}send_email_tool[^\n]*\n {6}reply to ben@customer\.example: Hi Ben, I have sent you an invitation for 30 minutes on 2026-11-26 at 09:00 \(Europe\/Berlin\)\./u,
    );
    const replied = await troupe(['inbox', 'answer', 'sample-04#2', 'accept'], env);
    expect(replied.stdout).toContain('Sent to ben@customer.example: “Re: Meeting next week?”');
    expect(replied.stdout).toContain('now: done — answered');

    const list = await troupe(['inbox', 'list'], env);
    expect(list.stdout).toContain('Waiting for you (3)');
    expect(list.stdout).not.toContain('sample-03#');
    expect(list.stdout).toMatch(
      /sample-08#1 {2}send_email_tool {2}\[accept, edit, response, ignore\] {2}“Approval needed: Q3 budget”\n {6}reply to dana@acme\.dev: Hi Dana, /u,
    );

    // A draft whole, before answering it; then a partial edit keeps the fields it leaves out.
    const shown = await troupe(['inbox', 'show', 'sample-08#1'], env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('sample-08#1 — send_email_tool — pending');
    expect(shown.stdout).toMatch(
      /# Proposed: send_email_tool\n[\s\S]*\*\*subject\*\*: Re: Approval needed: Q3 budget/u,
    );
    expect(shown.stdout).toContain(
      'Answer with: troupe inbox answer sample-08#1 <accept|edit|response|ignore> [text]',
    );
    const edited = await troupe(
      ['inbox', 'answer', 'sample-08#1', 'edit', '{"subject":"Q3 budget: approved"}'],
      env,
    );
    expect(edited.stdout).toContain('Sent to dana@acme.dev: “Q3 budget: approved”');
    // Answered: the email's heading and headers and the call as proposed, without the body.
    const answeredShown = await troupe(['inbox', 'show', 'sample-08#1'], env);
    expect(answeredShown.stdout).toContain('sample-08#1 — send_email_tool — answered');
    expect(answeredShown.stdout).toMatch(
      /## Email: Approval needed: Q3 budget[\s\S]*# Proposed: send_email_tool\n[\s\S]*\*\*subject\*\*: Re: Approval needed: Q3 budget[\s\S]*Answered with edit\./u,
    );
    // What was learned, and from which answer; every version readable.
    const learned = await troupe(['preferences', 'triage', '--history'], env);
    expect(learned.code).toBe(0);
    expect(learned.stdout).toMatch(
      /^triage \(email_assistant\/triage_preferences\), version 2 — 2026-11-25 09:00 UTC, offline: the user ignored an email triaged as notify \(inbox sample-02#1\)$/mu,
    );
    expect(learned.stdout).toMatch(
      / {2}v2 — .*\n {6}\+ - emails like “Project Atlas status update” from jordan@acme\.dev\n {2}v1 — .*, default/u,
    );
    const response = await troupe(['preferences', 'response'], env);
    expect(response.stdout).toMatch(/^response \(email_assistant\/response_preferences\), version \d+/mu);
    expect(response.stdout).toContain('the user said: use 100 requests per minute');
    const nope = await troupe(['preferences', 'tone'], env);
    expect(nope.code).toBe(2);
    expect(nope.stderr).toContain('No preferences named "tone"; use one of: triage, response, calendar.');

    const missing = await troupe(['inbox', 'show', 'nope#1'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('error TROUPE_INBOX_INVALID: No interrupt nope#1 in the inbox');

    const wrong = await troupe(['inbox', 'answer', 'sample-05#1', 'accept'], env);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain(
      'error TROUPE_INBOX_INVALID: “accept” is not allowed for Email Assistant: notify; allowed: response, ignore.',
    );
  });

  it('a bad time zone or clock setting is a configuration error naming the variable', async () => {
    const env = {
      TROUPE_STORE: 'memory',
      TROUPE_EMAIL_TIME_ZONE: 'Mars/Olympus',
      TROUPE_EMAIL_NOW: 'soon',
      LOG_LEVEL: 'silent',
    };
    const result = await troupe(['email'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /TROUPE_CONFIG_INVALID[\s\S]*TROUPE_EMAIL_NOW="soon"[\s\S]*TROUPE_EMAIL_TIME_ZONE="Mars\/Olympus"/u,
    );
  });
});
