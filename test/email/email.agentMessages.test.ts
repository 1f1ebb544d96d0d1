import { describe, expect, it } from 'vitest';
import { agentMessages } from '../../src/email/agentHistory.js';
import { type Email, parseEmail } from '../../src/email/emailInput.js';
import type { ResponseToolCall } from '../../src/email/responseTools.js';

function email(): Email {
  const parsed = parseEmail({
    id: 'm1',
    from: 'Marco <marco@acme.dev>',
    to: 'sam@acme.dev',
    subject: 'API limits',
    body: 'What rate limit should the public API use?',
  });
  if (!parsed.ok) throw parsed.error;
  return parsed.email;
}

const draft: ResponseToolCall = {
  tool: 'send_email_tool',
  args: { to: 'marco@acme.dev', subject: 'Re: API limits', content: 'Hi Marco' },
};
const invite: ResponseToolCall = {
  tool: 'schedule_meeting_tool',
  args: {
    attendees: ['marco@acme.dev'],
    subject: 'API limits',
    duration_minutes: 30,
    preferred_day: '2026-11-30',
    start_time: '10:30',
    time_zone: 'Europe/Berlin',
  },
};
const question = { tool: 'Question', args: { content: 'Which limit?' } } as const;
const check: ResponseToolCall = {
  tool: 'check_calendar_availability_tool',
  args: { day: '2026-11-30', time_zone: 'Europe/Berlin' },
};

/** The tool result the model is shown for each call, by call id. */
function results(messages: ReturnType<typeof agentMessages>) {
  return messages.flatMap((m) =>
    m.role === 'tool'
      ? m.content.flatMap((p) => (p.type === 'tool-result' ? [[p.toolCallId, p.output]] : []))
      : [],
  );
}

describe('what the reply agent is shown of an email’s history', () => {
  it('the person’s note on the email is a user message in its place, and takes no call id', () => {
    const messages = agentMessages(email(), [
      { kind: 'note', feedback: 'please keep it short' },
      { kind: 'carried', call: check, result: { free: [] } },
    ]);
    expect(messages[1]).toEqual({
      role: 'user',
      content: 'My note on this email, from reviewing it in my inbox: please keep it short',
    });
    expect(messages).toHaveLength(4);
    expect(results(messages)).toEqual([['call_1', { type: 'json', value: { free: [] } }]]);
  });

  it('a call carried out: its result, `done` when it returned nothing, and a note when the person edited it', () => {
    const messages = agentMessages(email(), [
      { kind: 'carried', call: check, result: undefined },
      { kind: 'carried', call: draft, result: undefined, edited: true },
      { kind: 'carried', call: invite, result: { eventId: 'e1' }, edited: true },
    ]);
    expect(results(messages)).toEqual([
      ['call_1', { type: 'json', value: { done: true } }],
      [
        'call_2',
        {
          type: 'json',
          value: {
            note: 'The user edited this call before it was carried out; it was carried out as shown here.',
            result: null,
          },
        },
      ],
      [
        'call_3',
        {
          type: 'json',
          value: {
            note: 'The user edited this call before it was carried out; it was carried out as shown here.',
            result: { eventId: 'e1' },
          },
        },
      ],
    ]);
  });

  it('a rejected call says it was not carried out, by tool, with the person’s feedback; an answered Question carries the answer', () => {
    const messages = agentMessages(email(), [
      { kind: 'rejected', call: draft, feedback: 'shorter' },
      { kind: 'rejected', call: invite, feedback: 'not Monday' },
      { kind: 'rejected', call: question, feedback: 'do not ask' },
      { kind: 'answered', call: question, answer: '100 per minute' },
    ]);
    expect(results(messages)).toEqual([
      ['call_1', { type: 'text', value: 'Not sent: the user rejected this draft. Their feedback: shorter' }],
      [
        'call_2',
        { type: 'text', value: 'Not booked: the user rejected this invitation. Their feedback: not Monday' },
      ],
      [
        'call_3',
        { type: 'text', value: 'Not carried out: the user rejected this call. Their feedback: do not ask' },
      ],
      ['call_4', { type: 'text', value: 'The user answered: 100 per minute' }],
    ]);
  });
});
