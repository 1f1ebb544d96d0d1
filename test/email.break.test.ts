import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../src/actors/clock.js';
import { EmailAssistant } from '../src/actors/emailAssistant.js';
import { createLocalCalendar, createLocalMailbox } from '../src/adapters/mail/localMailbox.js';
import { createMemoryStore } from '../src/adapters/store/memoryStore.js';
import { responseToolSchemas } from '../src/email/responseTools.js';
import type { TroupeStore } from '../src/ports/store.js';

// Attempts to break the email assistant from the outside, as its users (and the senders of the
// emails it reads) would. Each fault found keeps its test here.

// Wednesday 25 November 2026, 10:00 in Berlin.
const START = Date.parse('2026-11-25T09:00:00Z');

function assistantOn(store: TroupeStore, clock = new SimulatedClock(START)) {
  const mailbox = createLocalMailbox(store.documents, { now: () => clock.now() });
  const calendar = createLocalCalendar(store.documents);
  const assistant = new EmailAssistant({
    store,
    mailbox,
    calendar,
    clock,
    userName: 'Sam',
    timeZone: 'Europe/Berlin',
  });
  return { assistant, mailbox, calendar, clock };
}

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
    expect(sent?.to).toBe('marco@acme.dev Cc: all@evil.example');
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
