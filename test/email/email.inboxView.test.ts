/**
 * What the inbox shows and takes: the email as Markdown (headers on one line, text that cannot
 * fake a section), the proposal under it, the answers an interrupt allows, why an answer is
 * refused, and what each answer teaches memory (the reason the update prompt is given).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  disallowed,
  editedArgs,
  type HumanResponse,
  memoryUpdateFor,
  NOTIFY_ACTION,
  notifyInterrupt,
  toolInterrupt,
} from '../../src/email/agentInbox.js';
import { type Email, parseEmail } from '../../src/email/emailInput.js';
import { emailHeading, emailMarkdown, escapedText } from '../../src/email/emailMarkdown.js';
import { allowedAnswers } from '../../src/email/inboxItemJson.js';

function read(input: Record<string, unknown>): Email {
  const parsed = parseEmail({
    id: 'm1',
    from: 'Ana <ana@acme.dev>',
    to: 'sam@acme.dev',
    body: 'Hi',
    ...input,
  });
  if (!parsed.ok) throw parsed.error;
  return parsed.email;
}

describe('the email as Markdown', () => {
  it('a heading and header lines, each on one line; cc, date and thread only when known; the text; a rule', () => {
    const full = read({
      subject: 'Lunch\n  plans',
      from: 'Ana\t<ana@acme.dev>',
      cc: 'ben@acme.dev,\n carl@acme.dev',
      date: '2026-11-25',
      threadId: 't-9',
      body: '\n  Lunch at noon?  \n',
    });
    expect(emailMarkdown(full)).toBe(
      [
        '## Email: Lunch plans',
        '',
        '**From**: Ana <ana@acme.dev>',
        '**To**: sam@acme.dev',
        '**Cc**: ben@acme.dev, carl@acme.dev',
        '**Date**: 2026-11-25',
        '**Thread**: t-9',
        '**ID**: m1',
        '',
        'Lunch at noon?',
        '',
        '---',
      ].join('\n'),
    );
    expect(emailHeading(read({ subject: '  ' }))).toBe(
      '## Email: (no subject)\n\n**From**: Ana <ana@acme.dev>\n**To**: sam@acme.dev\n**ID**: m1',
    );
  });

  it('lines of the text that would make structure are escaped: headings, rules of any kind, backslashes', () => {
    const text = [
      '# Heading',
      '  ## indented',
      '---',
      '***  ',
      '___',
      '\\already',
      '-- two dashes',
      'plain # text',
      '**bold**',
    ].join('\n');
    expect(escapedText(text).split('\n')).toEqual([
      '\\# Heading',
      '\\  ## indented',
      '\\---',
      '\\***  ',
      '\\___',
      '\\\\already',
      '-- two dashes',
      'plain # text',
      '**bold**',
    ]);
    expect(escapedText('---\n---\n---', { fromLine: 1 })).toBe('---\n\\---\n\\---');
  });

  it('a line that only starts like a rule is text: `--- note`, `***bold***`, `___init__ x`', () => {
    const text = ['--- note', '---note', '***bold***', '*** bold', '___init__ x', '___ x', '___x'].join('\n');
    expect(escapedText(text)).toBe(text);
  });
});

describe('what the person is asked', () => {
  const email = read({ subject: 'Lunch?' });

  it('a notify shows the email alone; a proposal lists each argument under it, a question its content', () => {
    expect(notifyInterrupt(email).description).toBe(emailMarkdown(email));
    const send = toolInterrupt(email, 'schedule_meeting_tool', {
      attendees: ['ana@acme.dev'],
      subject: 'Lunch',
      duration_minutes: 30,
    });
    expect(send.description).toBe(
      `${emailMarkdown(email)}\n\n# Proposed: schedule_meeting_tool\n\n**attendees**: ["ana@acme.dev"]\n**subject**: Lunch\n**duration_minutes**: 30`,
    );
    expect(send.action_request).toEqual({
      action: 'schedule_meeting_tool',
      args: { attendees: ['ana@acme.dev'], subject: 'Lunch', duration_minutes: 30 },
    });
    const question = toolInterrupt(email, 'Question', { content: 'Which place?\n# not a heading' });
    expect(question.description).toBe(
      `${emailMarkdown(email)}\n\n# Question for you\n\nWhich place?\n\\# not a heading`,
    );
    expect(toolInterrupt(email, 'Question', {}).description.endsWith('# Question for you\n\n')).toBe(true);
  });

  it('each interrupt gets its own copy of the answers it allows', () => {
    const first = notifyInterrupt(email);
    first.config.allow_accept = true;
    expect(notifyInterrupt(email).config.allow_accept).toBe(false);
    const send = toolInterrupt(email, 'send_email_tool', {});
    send.config.allow_edit = false;
    expect(toolInterrupt(email, 'send_email_tool', {}).config.allow_edit).toBe(true);
  });

  it('the answers allowed, in the order the CLI names them; a refused one names them', () => {
    expect(
      allowedAnswers({ allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true }),
    ).toEqual(['accept', 'edit', 'response', 'ignore']);
    expect(allowedAnswers(notifyInterrupt(email).config)).toEqual(['response', 'ignore']);
    expect(disallowed(notifyInterrupt(email), { type: 'edit', args: {} })).toBe(
      '“edit” is not allowed for Email Assistant: notify; allowed: response, ignore',
    );
  });
});

describe('an edit', () => {
  const schema = z.object({ to: z.string(), subject: z.string() });
  const edit = (args: unknown) => ({ type: 'edit', args }) as Extract<HumanResponse, { type: 'edit' }>;

  it('naming a field the tool does not have is refused, naming the fields there are', () => {
    expect(editedArgs(edit({ to: 'a@x', subjct: 'typo', __proto__x: 1 }), schema)).toEqual({
      ok: false,
      problem: 'no field “subjct”, “__proto__x” (the fields are to, subject)',
    });
  });

  it('a wrapper whose arguments are a JSON string that does not parse is refused', () => {
    expect(editedArgs(edit({ args: '{oops' }), schema)).toEqual({
      ok: false,
      problem: 'the edited arguments are not JSON',
    });
  });

  it('a problem with the whole value is said of the root; problems are listed by field', () => {
    expect(editedArgs(edit('[1]'), schema)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^\(root\): /u),
    });
    // A list or null is not arguments, even with proposed values to fill in.
    const proposed = { to: 'a@x', subject: 's' };
    const root = { ok: false, problem: expect.stringMatching(/^\(root\): /u) };
    expect(editedArgs(edit('[1]'), schema, proposed)).toMatchObject(root);
    expect(editedArgs(edit('null'), schema, proposed)).toMatchObject(root);
    expect(editedArgs(edit({ args: 'null' }), schema, proposed)).toMatchObject(root);
    expect(editedArgs(edit({ to: 1, subject: 2 }), schema)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^to: .*; subject: /u),
    });
  });
});

describe('what an answer teaches', () => {
  const reason = (action: string, response: HumanResponse) => memoryUpdateFor(action, response)?.reason;

  it('says what happened, for the update prompt', () => {
    expect(reason(NOTIFY_ACTION, { type: 'response', args: 'reply' })).toBe(
      'the user chose to reply to an email triaged as notify',
    );
    expect(reason(NOTIFY_ACTION, { type: 'ignore' })).toBe('the user ignored an email triaged as notify');
    expect(reason('send_email_tool', { type: 'ignore' })).toBe(
      'the user ignored the drafted email, so the email should not have been answered',
    );
    expect(reason('schedule_meeting_tool', { type: 'ignore' })).toBe(
      'the user ignored the meeting invitation, so the email should not have been answered',
    );
    expect(reason('Question', { type: 'ignore' })).toBe(
      'the user ignored the question, so the email should not have been answered',
    );
    expect(reason('send_email_tool', { type: 'edit', args: {} })).toBe('the user edited the drafted email');
    expect(reason('send_email_tool', { type: 'response', args: 'x' })).toBe(
      'the user gave feedback on the drafted email',
    );
    expect(reason('schedule_meeting_tool', { type: 'edit', args: {} })).toBe(
      'the user edited the meeting invitation',
    );
    expect(reason('schedule_meeting_tool', { type: 'response', args: 'x' })).toBe(
      'the user gave feedback on the meeting invitation',
    );
  });

  it('nothing for an edit of a notify, an answered question, or an action it does not know', () => {
    expect(memoryUpdateFor(NOTIFY_ACTION, { type: 'edit', args: {} })).toBeUndefined();
    expect(memoryUpdateFor('Question', { type: 'edit', args: {} })).toBeUndefined();
    expect(memoryUpdateFor('check_calendar_availability_tool', { type: 'ignore' })).toBeUndefined();
  });
});
