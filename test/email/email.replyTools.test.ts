/**
 * The response agent's tools as a person reviews and edits them: which arguments are taken (and
 * which refused, so nothing odd reaches a header or the calendar), the form fields an edit is
 * built from, and the reply message that goes out (its subject, thread headers and recipients).
 */
import { describe, expect, it } from 'vitest';
import { composeReply, replySubject } from '../../src/email/replyMessage.js';
import { isReviewed, responseToolSchemas } from '../../src/email/responseTools.js';
import { humanName, toolFields } from '../../src/email/toolFields.js';

const meeting = {
  attendees: ['ana@acme.dev'],
  subject: 'Sync',
  duration_minutes: 30,
  preferred_day: '2026-12-01',
  start_time: '09:30',
  time_zone: 'Europe/Berlin',
};

describe('the arguments a tool takes', () => {
  const invite = responseToolSchemas.schedule_meeting_tool;
  const ok = (patch: Record<string, unknown>) => invite.safeParse({ ...meeting, ...patch }).success;

  it('a meeting: a day as YYYY-MM-DD, a 24-hour time, an IANA zone, 5 to 480 whole minutes, 1 to 50 attendees', () => {
    expect(ok({})).toBe(true);
    for (const start_time of ['00:00', '19:59', '23:59']) expect(ok({ start_time }), start_time).toBe(true);
    for (const start_time of ['24:00', '9:30', '09:60', '09:30 ', 'x09:30'])
      expect(ok({ start_time }), start_time).toBe(false);
    for (const preferred_day of ['2026-1-01', 'tomorrow', '2026-12-01T00:00'])
      expect(ok({ preferred_day })).toBe(false);
    expect(ok({ time_zone: 'Mars/Olympus' })).toBe(false);
    expect(ok({ time_zone: '' })).toBe(false);
    expect(invite.safeParse({ ...meeting, time_zone: 'Mars/Olympus' }).error?.issues[0]?.message).toBe(
      'an IANA time zone, e.g. Europe/Berlin',
    );
    expect([ok({ duration_minutes: 5 }), ok({ duration_minutes: 480 })]).toEqual([true, true]);
    expect([
      ok({ duration_minutes: 4 }),
      ok({ duration_minutes: 481 }),
      ok({ duration_minutes: 30.5 }),
    ]).toEqual([false, false, false]);
    expect(ok({ attendees: [] })).toBe(false);
    expect(ok({ attendees: Array.from({ length: 51 }, (_, i) => `p${i}@acme.dev`) })).toBe(false);
    expect(ok({ attendees: ['ab'] })).toBe(false);
  });

  it('header fields stay on one line: a line break or control character in a subject or attendee is refused', () => {
    expect(ok({ subject: 'Sync\r\nBcc: all@evil.example' })).toBe(false);
    expect(ok({ subject: 'Sync\u2028x' })).toBe(false);
    expect(ok({ attendees: ['ana@acme.dev\n'] })).toBe(true); // trimmed first
    expect(ok({ attendees: ['ana@acme.dev\nb'] })).toBe(false);
    expect(invite.safeParse({ ...meeting, subject: 'a\tb' }).error?.issues[0]?.message).toBe(
      'one line, without control characters',
    );
    const send = responseToolSchemas.send_email_tool;
    expect(send.safeParse({ to: 'ana@acme.dev', subject: 'Re: x', content: 'Hi' }).success).toBe(true);
    expect(send.safeParse({ to: 'ana@acme.dev', subject: ' ', content: 'Hi' }).success).toBe(false);
    expect(send.safeParse({ to: 'Marco', subject: 'Re: x', content: 'Hi' }).error?.issues[0]?.message).toBe(
      'not a list of email addresses: "Marco" is not an email address',
    );
  });

  it('only the calls that change something wait for review', () => {
    expect(
      ['send_email_tool', 'schedule_meeting_tool', 'Question'].every((t) => isReviewed(t as never)),
    ).toBe(true);
    expect(isReviewed('check_calendar_availability_tool')).toBe(false);
    expect(isReviewed('Done')).toBe(false);
  });
});

describe('the form an edit is built from', () => {
  it('one field per argument, in order, with its label, kind, limits and the proposed value', () => {
    expect(toolFields(responseToolSchemas.schedule_meeting_tool, meeting)).toEqual([
      { name: 'attendees', label: 'Attendees', kind: 'list', required: true, value: ['ana@acme.dev'] },
      { name: 'subject', label: 'Subject', kind: 'text', required: true, maxLength: 500, value: 'Sync' },
      {
        name: 'duration_minutes',
        label: 'Duration minutes',
        kind: 'number',
        required: true,
        int: true,
        min: 5,
        max: 480,
        value: 30,
      },
      { name: 'preferred_day', label: 'Preferred day', kind: 'text', required: true, value: '2026-12-01' },
      { name: 'start_time', label: 'Start time', kind: 'text', required: true, value: '09:30' },
      { name: 'time_zone', label: 'Time zone', kind: 'text', required: true, value: 'Europe/Berlin' },
    ]);
    // A fixed value is nothing to edit.
    expect(toolFields(responseToolSchemas.Done, { done: true })).toEqual([]);
  });

  it('optional, defaulted and nullable fields, booleans and choices', async () => {
    const { z } = await import('zod');
    const schema = z.object({
      note: z.string().optional(),
      urgent: z.boolean().default(false),
      level: z.enum(['low', 'high']).nullable(),
      score: z.number(),
    });
    expect(toolFields(schema, { level: 'low' })).toEqual([
      { name: 'note', label: 'Note', kind: 'text', required: false, value: undefined },
      { name: 'urgent', label: 'Urgent', kind: 'boolean', required: true, value: undefined },
      { name: 'level', label: 'Level', kind: 'enum', required: true, options: ['low', 'high'], value: 'low' },
      { name: 'score', label: 'Score', kind: 'number', required: true, int: false, value: undefined },
    ]);
    expect(humanName('_time_zone_')).toBe('Time zone');
  });
});

describe('the reply that goes out', () => {
  it('has one Re: in front of the subject, whatever the subject had', () => {
    expect(replySubject('Lunch')).toBe('Re: Lunch');
    expect(replySubject('  RE: re[2]:Re :  Lunch ')).toBe('Re: Lunch');
    expect(replySubject('Regarding lunch')).toBe('Re: Regarding lunch');
  });

  const envelope = {
    from: 'Sam <sam@acme.dev>',
    messageId: '<r1@acme.dev>',
    date: new Date('2026-11-25T10:00:00Z'),
  };
  const header = (raw: string, name: string) =>
    new RegExp(`^${name}: (.*(?:\\r\\n[ \\t].*)*)`, 'mu').exec(raw)?.[1]?.replace(/\r\n[ \t]/gu, ' ');

  it('answers the Message-ID, lists the thread once each, and keeps the subject on one line', async () => {
    const raw = await composeReply(
      {
        to: 'Ana <ana@acme.dev>',
        subject: 'Lunch\r\nBcc: all@evil.example',
        content: 'Yes.\nSee you.',
        inReplyTo: 'q@acme.dev',
        references: ['<root@acme.dev>', ' q@acme.dev ', 'not an id', ''],
      },
      envelope,
    );
    expect(header(raw, 'In-Reply-To')).toBe('<q@acme.dev>');
    expect(header(raw, 'References')).toBe('<root@acme.dev> <q@acme.dev>');
    expect(header(raw, 'Subject')).toBe('Re: Lunch Bcc: all@evil.example');
    expect(raw).not.toMatch(/^Bcc:/mu);
    expect(header(raw, 'Message-ID')).toBe('<r1@acme.dev>');
    expect(header(raw, 'Date')).toBe('Wed, 25 Nov 2026 10:00:00 +0000');
    expect(Buffer.from(raw.split('\r\n\r\n')[1] ?? '', 'base64').toString('utf8')).toBe('Yes.\r\nSee you.');
  });

  it('without a Message-ID to answer, has neither In-Reply-To nor References', async () => {
    const raw = await composeReply(
      { to: 'ana@acme.dev', subject: 'x', content: 'y', references: [] },
      envelope,
    );
    expect(raw).not.toMatch(/^In-Reply-To:/mu);
    expect(raw).not.toMatch(/^References:/mu);
  });

  it('is not written for recipients or a sender that are not addresses, saying how to write them', async () => {
    await expect(
      composeReply({ to: 'Marco', subject: 'x', content: 'y', references: [] }, envelope),
    ).rejects.toThrow(
      'The reply cannot be sent to "Marco": "Marco" is not an email address. Write the recipients as email addresses separated by commas, e.g. "Name <name@example.com>, other@example.com".',
    );
    await expect(
      composeReply(
        { to: 'ana@acme.dev', subject: 'x', content: 'y', references: [] },
        { ...envelope, from: 'a@x, b@x' },
      ),
    ).rejects.toThrow('The reply cannot be sent from "a@x, b@x": it names more than one address.');
    await expect(
      composeReply(
        { to: 'ana@acme.dev', subject: 'x', content: 'y', references: [] },
        { ...envelope, from: 'nobody' },
      ),
    ).rejects.toMatchObject({
      code: 'TROUPE_EMAIL_INVALID',
      message: expect.stringMatching(/^The reply cannot be sent from "nobody": /u),
    });
  });
});

describe('a reply to a lone message, and what a refusal quotes', () => {
  const envelope = { from: 'sam@acme.dev', messageId: '<r1@acme.dev>', date: new Date(0) };

  it('lists the answered Message-ID as the References when the thread had none', async () => {
    const raw = await composeReply(
      { to: 'ana@acme.dev', subject: 'x', content: 'y', inReplyTo: '<q@acme.dev>', references: [] },
      envelope,
    );
    expect(raw).toMatch(/^In-Reply-To: <q@acme\.dev>\r$/mu);
    expect(raw).toMatch(/^References: <q@acme\.dev>\r$/mu);
    const padded = await composeReply(
      {
        to: 'ana@acme.dev',
        subject: 'x',
        content: 'y',
        inReplyTo: 'q@acme.dev',
        references: [' root@acme.dev '],
      },
      envelope,
    );
    expect(padded).toMatch(/^References: <root@acme\.dev> <q@acme\.dev>\r$/mu);
  });

  it('quotes at most 200 characters of recipients or a sender it refuses', async () => {
    const long = 'm'.repeat(250);
    const toError = await composeReply(
      { to: long, subject: 'x', content: 'y', references: [] },
      envelope,
    ).catch((e: unknown) => e);
    expect(toError).toMatchObject({
      code: 'TROUPE_EMAIL_INVALID',
      message: expect.stringMatching(/^The reply cannot be sent to "m{200}": /u),
    });
    const fromError = await composeReply(
      { to: 'ana@acme.dev', subject: 'x', content: 'y', references: [] },
      { ...envelope, from: long },
    ).catch((e: unknown) => e);
    expect(fromError).toMatchObject({
      code: 'TROUPE_EMAIL_INVALID',
      message: expect.stringMatching(/^The reply cannot be sent from "m{200}": /u),
    });
  });
});

describe('a reply that starts a thread', () => {
  it('has no In-Reply-To nor References, and a subject with “re:” inside keeps it', async () => {
    expect(replySubject('Budget re: plan')).toBe('Re: Budget re: plan');
    expect(replySubject('Re[12]: Budget')).toBe('Re: Budget');
    const raw = await composeReply(
      { to: 'ana@acme.dev', subject: 'Lunch', content: 'Yes.', references: [] },
      { from: 'sam@acme.dev', messageId: '<r1@acme.dev>', date: new Date(0) },
    );
    expect(raw).not.toMatch(/^(In-Reply-To|References):/imu);
    await expect(
      composeReply(
        { to: 'Marco', subject: 'x', content: 'y', references: [] },
        { from: 'sam@acme.dev', messageId: '<r1@acme.dev>' },
      ),
    ).rejects.toThrow('e.g. "Name <name@example.com>, other@example.com"');
  });
});
