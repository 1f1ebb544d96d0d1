import { createMemoryStore } from 'troupe';
import {
  createLocalCalendar,
  createLocalMailbox,
  EmailAssistant,
  memoryNamespaces,
  PREFERENCES_KEY,
  SimulatedClock,
} from 'troupe/email';
import { describe, expect, it } from 'vitest';

describe('troupe/email, as an app that embeds it uses it', () => {
  it('runs an email through the assistant from the entry point alone: receive, the inbox, an answer, the reply', async () => {
    const store = createMemoryStore();
    const clock = new SimulatedClock(Date.parse('2026-11-25T09:00:00Z'));
    const mailbox = createLocalMailbox(store.documents, { now: () => clock.now() });
    const assistant = new EmailAssistant({
      store,
      mailbox,
      calendar: createLocalCalendar(store.documents),
      clock,
      userName: 'Sam',
      timeZone: 'Europe/Berlin',
    });
    const record = await assistant.receive({
      id: 'm1',
      from: 'Marco <marco@acme.dev>',
      to: 'sam@acme.dev',
      subject: 'Quick question about the API',
      body: 'What rate limit should the public API use?',
    });
    expect(record instanceof Error).toBe(false);
    const [review] = await assistant.pending();
    expect(review?.request.action_request.action).toBe('send_email_tool');
    await assistant.answer(review?.id as string, {
      type: 'edit',
      args: { content: 'Hi Marco, 100 per minute. Sam' },
    });
    const [sent] = await mailbox.sent();
    expect(sent?.content).toBe('Hi Marco, 100 per minute. Sam');
    expect((await store.memory.get(memoryNamespaces.response, PREFERENCES_KEY))?.version).toBe(2);
  });
});
