import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { SimulatedClock } from '../../src/actors/clock.js';
import { EmailAssistant } from '../../src/actors/email/emailAssistant.js';
import type { AnsweredInterrupt, EmailRecord, InboxItem } from '../../src/actors/email/emailRecord.js';
import { createLocalCalendar, createLocalMailbox } from '../../src/adapters/mail/localMailbox.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { openDefaultStore } from '../../src/adapters/store/storeFromEnv.js';
import { memoryUpdateFor, NOTIFY_ACTION } from '../../src/email/agentInbox.js';
import { parseEmail } from '../../src/email/emailInput.js';
import { updateMemory } from '../../src/email/memoryUpdate.js';
import { responseToolSchemas } from '../../src/email/responseTools.js';
import { defaultTriagePreferences } from '../../src/email/triagePreferences.js';
import { readTriagePreferences } from '../../src/email/triageRouter.js';
import type { AgentModel, AgentStepRequest } from '../../src/ports/agentModel.js';
import type { ObjectModel, ObjectRequest } from '../../src/ports/objectModel.js';
import { assistantOn, EMAIL_START } from '../support/emailHarness.js';
import { runTroupe } from '../support/runTroupe.js';

// Attempts to break the email assistant from the outside, as its users (and the senders of the
// emails it reads) would. Each fault found keeps its test here.

const troupe = (args: string[], env: Record<string, string>) => runTroupe(args, env);

const statusUpdate = {
  id: 's1',
  from: 'Jordan <jordan@acme.dev>',
  to: 'sam@acme.dev',
  subject: 'Project Atlas status update',
  body: 'FYI: Atlas is on track. No action items.',
};

// Wednesday 25 November 2026, 10:00 in Berlin.
const START = EMAIL_START;

describe('a hostile subject does not reach the headers of the reply', () => {
  it('a subject with line breaks and escape codes is answered with a one-line, clean "Re:" subject', async () => {
    const store = createMemoryStore();
    const { assistant, mailbox } = assistantOn(store);
    await assistant.receive({
      id: 'h1',
      from: 'marco@acme.dev\r\nCc: all@evil.example',
      to: 'sam@acme.dev',
      subject: 'API limits\r\nBcc: all@evil.example\n\u001b[31mred\u001b[0m',
      body: 'What rate limit should the public API use?',
    });
    const [review] = await assistant.pending();
    expect(review?.request.action_request.action).toBe('send_email_tool');
    await assistant.answer(review?.id as string, { type: 'accept' });
    const [sent] = await mailbox.sent();
    expect(sent?.subject).toBe('Re: API limits Bcc: all@evil.example red');
    // The sender's header ends at its line break: what follows it is not an address of the reply.
    expect(sent?.to).toBe('marco@acme.dev');
    // The body quotes the subject; it may keep its own line breaks but no control codes.
    expect(sent?.content).not.toContain('\r');
    expect(sent?.content).not.toContain('\u001b');
  });

  it('an edit, or a model, cannot put a line break into a reply’s subject or recipient', () => {
    const schema = responseToolSchemas.send_email_tool;
    const base = { to: 'marco@acme.dev', subject: 'Re: API limits', content: 'Hi Marco,\n\nYes.' };
    expect(schema.safeParse(base).success).toBe(true);
    expect(schema.safeParse({ ...base, subject: 'Re: x\r\nBcc: all@evil.example' }).success).toBe(false);
    expect(schema.safeParse({ ...base, to: 'marco@acme.dev\nBcc: all@evil.example' }).success).toBe(false);
    const meeting = responseToolSchemas.schedule_meeting_tool;
    const invite = {
      attendees: ['ben@customer.example'],
      subject: 'Call',
      duration_minutes: 30,
      preferred_day: '2026-11-26',
      start_time: '09:00',
      time_zone: 'Europe/Berlin',
    };
    expect(meeting.safeParse(invite).success).toBe(true);
    expect(meeting.safeParse({ ...invite, subject: 'Call\nX-Evil: 1' }).success).toBe(false);
    expect(meeting.safeParse({ ...invite, attendees: ['ben@customer.example\r\nBcc: x'] }).success).toBe(
      false,
    );
  });
});

describe('troupe email after a process died between storing an answer and acting on it', () => {
  it('carries the stored answer through, so the email does not wait forever', async () => {
    const env = {
      TROUPE_DATA_DIR: await mkdtemp(join(tmpdir(), 'troupe-email-break-')),
      TROUPE_EMAIL_NOW: '2026-11-25T09:00:00Z',
      LOG_LEVEL: 'silent',
    };
    expect((await troupe(['email'], env)).code).toBe(0);
    // `troupe inbox answer sample-03#1 accept` stored the answer, then the process died.
    // (Answered two minutes ago: a younger answer is left to the process that took it.)
    const store = await openDefaultStore(env);
    // (The answer is written into the email's record, and the interrupt taken out of the inbox.)
    const stored = await store.documents.get<InboxItem>('email-inbox', 'sample-03#1');
    const record = await store.documents.get<EmailRecord>('email-lifecycle', 'sample-03');
    const answered: AnsweredInterrupt = {
      n: 1,
      action: stored?.value.request.action_request.action as string,
      args: stored?.value.request.action_request.args as Record<string, unknown>,
      step: record?.value.steps.length as number,
      answer: { type: 'accept' },
      createdAt: stored?.value.createdAt as number,
      answeredAt: START - 120_000,
    };
    await store.documents.batch([
      { op: 'delete', collection: 'email-inbox', key: 'sample-03#1' },
      {
        op: 'put',
        collection: 'email-lifecycle',
        key: 'sample-03',
        value: { ...record?.value, answered: [answered] },
        expectedVersion: record?.version,
      },
    ]);
    await store.close();
    // Nothing lists it any more and a second answer is refused: only troupe email can carry it on.
    expect((await troupe(['inbox', 'answer', 'sample-03#1', 'accept'], env)).stderr).toContain(
      'already answered',
    );
    const again = await troupe(['email'], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(
      /sample-03 “Quick question about the API limits”[\s\S]*?now: done — answered/u,
    );
    const after = await openDefaultStore(env);
    try {
      const sent = await createLocalMailbox(after.documents).sent();
      expect(sent.map((s) => s.subject)).toEqual(['Re: Quick question about the API limits']);
    } finally {
      await after.close();
    }
    // Run again: nothing is sent twice.
    await troupe(['email'], env);
    const last = await openDefaultStore(env);
    try {
      expect(await createLocalMailbox(last.documents).sent()).toHaveLength(1);
    } finally {
      await last.close();
    }
  });
});

/** A model that triages as notify, cannot update preferences, and drafts `draft` (Done once a reply went out). */
function draftingModel(
  draft: string,
  gate?: { reached: () => void; release: Promise<void> },
): ObjectModel & AgentModel {
  return {
    id: 'test:drafting',
    async generateObject<Schema extends z.ZodType>(request: ObjectRequest<Schema>) {
      if (request.schemaName === 'triage_decision')
        return { reasoning: 'an update', classification: 'notify' } as z.output<Schema>;
      throw new Error('no preference updates in this test');
    },
    async nextToolCall(request: AgentStepRequest) {
      // A call made so far: the reply went out.
      if (request.messages.some((m) => m.role === 'tool'))
        return { toolCallId: 'c', toolName: 'Done', input: { done: true } };
      if (gate) {
        gate.reached();
        await gate.release;
      }
      const input = { to: 'jordan@acme.dev', subject: 'Re: Atlas', content: draft };
      return { toolCallId: 'c', toolName: 'send_email_tool', input };
    },
  };
}

describe('an answer acted on in one process while another runs troupe email on the same store', () => {
  it('the draft the human saw is the one sent, and an email done stays done', async () => {
    const store = createMemoryStore();
    const clock = new SimulatedClock(START);
    const on = (model: ObjectModel & AgentModel) => {
      const mailbox = createLocalMailbox(store.documents, { now: () => clock.now() });
      const assistant = new EmailAssistant({
        store,
        mailbox,
        calendar: createLocalCalendar(store.documents),
        clock,
        model,
        agentModel: model,
        userName: 'Sam',
        timeZone: 'Europe/Berlin',
      });
      return { assistant, mailbox };
    };
    let reached = () => {};
    const atModel = new Promise<void>((resolve) => {
      reached = resolve;
    });
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // `troupe inbox answer`: its model is slow to draft.
    const answering = on(draftingModel('Draft from the answering process.', { reached, release: released }));
    // `troupe email`, started meanwhile on the same store: it resumes what it finds answered.
    const running = on(draftingModel('Draft from troupe email.'));
    await answering.assistant.receive({ ...statusUpdate });
    const answered = answering.assistant.answer('s1#1', { type: 'response', args: 'say thanks' });
    await atModel;
    // The answering process is still at its model a minute on (a younger answer is left to it).
    clock.setNow(clock.now() + 61_000);
    await running.assistant.resume();
    const [shown] = await running.assistant.pending();
    expect(shown?.request.action_request.args.content).toBe('Draft from troupe email.');
    await running.assistant.answer(shown?.id as string, { type: 'accept' });
    release();
    await answered.catch(() => undefined);

    const sent = await running.mailbox.sent();
    expect(sent.map((s) => s.content)).toEqual(['Draft from troupe email.']);
    expect((await running.assistant.record('s1'))?.state.value).toBe('done');
    expect(await running.assistant.pending()).toEqual([]);
  });
});

describe('ids and thread headers that could not be typed back or would break a reply', () => {
  it('an email whose id, Message-ID or References carry control characters is refused, naming the field', async () => {
    const base = {
      id: 'e1',
      from: 'a@x.example',
      to: 'sam@acme.dev',
      subject: 'Hello?',
      body: 'A question?',
    };
    // The terminal shows `escid#1` for this id, and `troupe inbox answer escid#1` finds nothing.
    const cases: [string, Record<string, unknown>][] = [
      ['id', { ...base, id: 'esc\u001b[31mid' }],
      ['id', { ...base, id: 'rtl\u202eid' }],
      ['messageId', { ...base, messageId: '<m1@x.example>\r\nBcc: all@evil.example' }],
      ['references', { ...base, references: ['<r1@x.example>\r\nBcc: all@evil.example'] }],
      ['threadId', { ...base, threadId: 't1\u0007' }],
      ['id', { id: 'bell\u0007', content: 'From: a@x.example\nTo: sam@acme.dev\nSubject: Hi\n\nBody' }],
    ];
    for (const [field, input] of cases) {
      const parsed = parseEmail(input);
      expect(parsed.ok, JSON.stringify(input)).toBe(false);
      if (!parsed.ok) {
        expect(parsed.error.code).toBe('TROUPE_EMAIL_INVALID');
        expect(parsed.error.message).toContain(field);
      }
    }
    expect(parseEmail({ ...base, id: '18c2f0a9b3e4d5c6', references: '<a@x> <b@x>' }).ok).toBe(true);
  });
});

describe('triage preferences after months of learning', () => {
  it('a profile that learned a hundred emails keeps its recent lessons and what the user wrote (it was reset to the defaults)', async () => {
    const store = createMemoryStore();
    const request = memoryUpdateFor(NOTIFY_ACTION, { type: 'response', args: 'x' });
    if (!request) throw new Error('a notify answered with feedback updates triage');
    for (let i = 0; i < 100; i += 1) {
      const parsed = parseEmail({
        id: `w${i}`,
        from: `Person ${i} <person${i}@team${i}.example>`,
        to: 'sam@acme.dev',
        subject: `Weekly report ${i}: numbers, risks and the plan for the quarter ahead of us`,
        body: 'See attached.',
      });
      if (!parsed.ok) throw parsed.error;
      await updateMemory({
        memory: store.memory,
        request,
        interaction: {
          email: parsed.email,
          feedback: `always answer reports like this one (${i}) ${'with care '.repeat(30)}`,
        },
        at: START + i,
      });
      // What triage reads after each lesson has it (not the defaults, which it fell back to once
      // the profile outgrew 20,000 characters, and from which the next update started over).
      const { instructions } = await readTriagePreferences(store.memory);
      expect(instructions).toContain(`person${i}@team${i}.example`);
      if (i >= 20) expect(instructions).toContain(`person${i - 20}@team${i - 20}.example`);
      expect(instructions).toContain('- direct questions from team members, customers or managers');
    }
    expect((await readTriagePreferences(store.memory)).rules).toEqual(defaultTriagePreferences.rules);
  });
});

describe('troupe inbox answer, typed as a person would', () => {
  it('an edit or a response without its text says what to add', async () => {
    const env = {
      TROUPE_DATA_DIR: await mkdtemp(join(tmpdir(), 'troupe-email-break-')),
      TROUPE_EMAIL_NOW: '2026-11-25T09:00:00Z',
      LOG_LEVEL: 'silent',
    };
    await troupe(['email'], env);
    const edit = await troupe(['inbox', 'answer', 'sample-03#1', 'edit'], env);
    expect(edit.code).toBe(2);
    expect(edit.stderr).toContain(
      `error TROUPE_INBOX_INVALID: An edit needs the changed arguments as JSON, e.g. troupe inbox answer sample-03#1 edit '{"subject": "…"}'.`,
    );
    const response = await troupe(['inbox', 'answer', 'sample-02#1', 'response'], env);
    expect(response.code).toBe(2);
    expect(response.stderr).toContain(
      'error TROUPE_INBOX_INVALID: A response needs your feedback as text, e.g. troupe inbox answer sample-02#1 response reply that I agree.',
    );
    // Nothing was answered.
    expect((await troupe(['inbox', 'list'], env)).stdout).toContain('Waiting for you (6)');
  });
});
