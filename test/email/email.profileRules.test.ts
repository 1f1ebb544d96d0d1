/**
 * The rules that keep a preference profile the user's: which model updates are refused (and the
 * reason shown for it), how a profile past its limit is compacted without a model (what is kept,
 * what goes first, and how that is described), and which lines count as added by an update.
 */
import { describe, expect, it } from 'vitest';
import { editLesson } from '../../src/email/editLesson.js';
import {
  compactByRule,
  describeCompaction,
  mapAddedLines,
  profileLines,
  refusalOf,
  sectionName,
} from '../../src/email/profileSections.js';

const profile = [
  'Ignore:',
  '- marketing newsletters',
  '- spam',
  '',
  'Notify:',
  '- build failures',
  '- security alerts',
  '',
  'Respond:',
  '- direct questions',
  '- meeting requests',
].join('\n');

describe('a model’s update is refused when it', () => {
  it('drops or renames a heading, naming each one lost', () => {
    expect(refusalOf(profile, profile.replace('Notify:', 'Tell me:'))).toBe(
      'dropped or renamed the heading “Notify”',
    );
    expect(refusalOf(profile, profile.replace('Notify:', 'N:').replace('Respond:', 'R:'))).toBe(
      'dropped or renamed the headings “Notify”, “Respond”',
    );
  });

  it('adds at the end a copy of a line that is under another section, counting the copies by where they went', () => {
    expect(refusalOf(profile, `${profile}\n- spam`)).toBe('moved 1 line from Ignore to Respond');
    expect(refusalOf(profile, `${profile}\n- spam\n- marketing newsletters\n- build failures`)).toBe(
      'moved 2 lines from Ignore to Respond, 1 line from Notify to Respond',
    );
    // Added under a new heading at the end: moved there.
    expect(refusalOf(profile, `${profile}\n\nLater:\n- direct questions`)).toBe(
      'moved 1 line from Respond to Later',
    );
  });

  it('but adding lines, or again a line of the same section, is an update', () => {
    expect(refusalOf(profile, profile)).toBeUndefined();
    expect(refusalOf(profile, `${profile}\n- lunch plans`)).toBeUndefined();
    expect(refusalOf(profile, `${profile}\n- meeting requests`)).toBeUndefined();
    // A line that is in two sections may be added again to either.
    const twice = `${profile}\n- spam`.replace('- security alerts', '- security alerts\n- lunch');
    expect(refusalOf(`${twice}\n- lunch`, `${twice}\n- lunch\n- spam`)).toBeUndefined();
  });

  it('an appended copy is found only as a whole line, indented or after a blank line, and sections may be named by lines of their own', () => {
    // A line that is only part of another line is new, not a copy.
    const parts = 'Ignore:\n- spam filters\n- a - spam\n\nRespond:\n- questions';
    expect(refusalOf(parts, `${parts}\n- spam`)).toBeUndefined();
    expect(refusalOf(profile, `${profile}\n\n  - spam`)).toBe('moved 1 line from Ignore to Respond');
    // Trailing white space on a heading is not a renamed heading.
    expect(refusalOf('Ignore:  \n- spam', 'Ignore:\n- spam\n- ads')).toBeUndefined();
    // A profile without headings: lines are at the top.
    expect(refusalOf('- a', '- a\n- b')).toBeUndefined();
    // Text added at the end of the last line is an edit of it, not a new section.
    expect(refusalOf(profile, `${profile} more\n- spam`)).toBe('moved 1 line from Ignore to Respond');
  });

  it('a line that is in two sections is where it was first; keeping it in either is no move', () => {
    const twice = 'Ignore:\n- spam\n- ads\n\nNotify:\n- spam';
    expect(refusalOf(twice, twice.replace('- ads', '- banner ads'))).toBeUndefined();
  });

  it('moves a line to another section anywhere in the profile', () => {
    const moved = profile.replace('- spam\n', '').replace('- security alerts', '- security alerts\n- spam');
    expect(refusalOf(profile, moved)).toBe('moved 1 line from Ignore to Notify');
    // Text after the end that does not start a line is an edit of the last line, not an appended one.
    expect(refusalOf(profile, profile.replace('- spam\n', '').concat(' today\n- spam'))).toBe(
      'moved 1 line from Ignore to Respond',
    );
  });

  it('drops more than a quarter of the lines, unless it is a compaction', () => {
    const lines = ['Notes:', ...Array.from({ length: 8 }, (_, i) => `- note ${i}`)];
    const before = lines.join('\n');
    const dropTwo = [lines[0], ...lines.slice(3)].join('\n');
    const dropThree = [lines[0], ...lines.slice(4)].join('\n');
    expect(refusalOf(before, dropTwo)).toBeUndefined();
    expect(refusalOf(before, dropThree)).toBe('dropped 33% of the lines');
    expect(refusalOf(before, dropThree, { compaction: true })).toBeUndefined();
    // Exactly a quarter is still an update.
    expect(refusalOf('Notes:\n- a\n- b\n- c', 'Notes:\n- a\n- b\n- x')).toBeUndefined();
  });
});

describe('how a section is named', () => {
  it('by the words before its colon, cut at 40 characters; before the first heading, the top', () => {
    expect(sectionName('Ignore: emails that need nothing')).toBe('Ignore');
    expect(sectionName('Meetings are 30 minutes')).toBe('Meetings are 30 minutes');
    expect(sectionName('x'.repeat(40))).toBe('x'.repeat(40));
    expect(sectionName('x'.repeat(41))).toBe(`${'x'.repeat(39)}…`);
    expect(sectionName('')).toBe('the top');
    expect(sectionName('Ignore : what needs nothing')).toBe('Ignore');
  });

  it('a profile’s lines know their section; lines before the first heading belong to none', () => {
    expect(profileLines('- loose\n  Head: x  \n\n  - item ')).toEqual([
      { text: '- loose', section: '', heading: false },
      { text: 'Head: x', section: 'Head: x', heading: true },
      { text: '- item', section: 'Head: x', heading: false },
    ]);
  });
});

describe('compacting by rule', () => {
  it('leaves a profile within the limit as it is', () => {
    expect(compactByRule(profile, profile.length)).toEqual({
      text: profile,
      merged: 0,
      dropped: 0,
      cut: false,
    });
    expect(describeCompaction(compactByRule(profile, profile.length), profile.length)).toBe(
      `nothing to drop (${profile.length} → ${profile.length} characters)`,
    );
  });

  it('merges duplicate lines of a section first (any case or spacing), keeping the first; the same line elsewhere stays', () => {
    const text = 'Ignore:\n- Spam  mail\n- spam mail\n- SPAM MAIL\n\nNotify:\n- spam mail';
    const c = compactByRule(text, text.length - 1);
    expect(c).toEqual({
      text: 'Ignore:\n- Spam  mail\n\nNotify:\n- spam mail',
      merged: 2,
      dropped: 0,
      cut: false,
    });
    expect(describeCompaction(c, 1234)).toBe('merged 2 duplicate lines (1,234 → 41 characters)');
    const one = compactByRule('A:\n- x\n- x', 8);
    expect(describeCompaction(one, 9)).toBe('merged 1 duplicate line (9 → 6 characters)');
  });

  it('duplicates are found across blank lines and indentation, by their words (not with the spaces taken out)', () => {
    const text = 'Ignore:\n- spam\n\n  - spam\n- spam mail\n- spammail';
    expect(compactByRule(text, text.length - 1)).toEqual({
      text: 'Ignore:\n- spam\n\n- spam mail\n- spammail',
      merged: 1,
      dropped: 0,
      cut: false,
    });
  });

  it('the section with the most learned lines gives one up first, wherever it is', () => {
    const text = 'Respond:\n- r1\n- r2\n\nIgnore:\n- i1\n- i2\n- i3';
    expect(compactByRule(text, text.length - 1).text).toBe('Respond:\n- r1\n- r2\n\nIgnore:\n- i2\n- i3');
  });

  it('then drops the oldest learned lines, from the section with the most of them, never the defaults', () => {
    const defaults = 'Ignore:\n- spam\n\nRespond:\n- questions';
    const text = [
      'Ignore:',
      '- spam',
      '- learned i1',
      '- learned i2',
      '- learned i3',
      '',
      'Respond:',
      '- questions',
      '- learned r1',
      '- learned r2',
    ].join('\n');
    const c = compactByRule(text, text.length - 20, defaults);
    // Ignore has the most learned lines: its oldest goes first; then both have two, and the first found goes.
    expect(c.text).toBe('Ignore:\n- spam\n- learned i3\n\nRespond:\n- questions\n- learned r1\n- learned r2');
    expect(c).toMatchObject({ merged: 0, dropped: 2, cut: false });
    expect(describeCompaction(c, text.length)).toBe(
      `dropped the 2 oldest learned lines (${text.length} → ${c.text.length} characters)`,
    );
    expect(describeCompaction(compactByRule(text, text.length - 1, defaults), text.length)).toMatch(
      /^dropped the 1 oldest learned line \(/u,
    );
  });

  it('cuts the rest at a line only when dropping every learned line is not enough', () => {
    const defaults = 'Ignore:\n- spam\n- phishing';
    const text = 'Ignore:\n- spam\n- phishing\n- learned';
    const c = compactByRule(text, 16, defaults);
    expect(c).toEqual({ text: 'Ignore:\n- spam', merged: 0, dropped: 1, cut: true });
    expect(describeCompaction(c, text.length)).toBe(
      `dropped the 1 oldest learned line, cut the rest at a line (${text.length} → 14 characters)`,
    );
    // No line break to cut at: cut at the limit.
    // Each dropped line gives back its length and its line break, so no more lines go than needed.
    const five = 'Notes:\n- learned 1\n- learned 2\n- learned 3\n- learned 4';
    expect(compactByRule(five, five.length - 24)).toMatchObject({ dropped: 2, cut: false });
    expect(compactByRule('x'.repeat(30), 10)).toEqual({
      text: 'x'.repeat(10),
      merged: 0,
      dropped: 0,
      cut: true,
    });
  });
});

describe('lines an update added under a section', () => {
  const ignoreOnly = /^ignore\b/iu;
  const mark = (line: string) => `${line} [new]`;

  it('appended at the end: those under a matching heading, starting from the profile’s last heading', () => {
    const before = 'Respond:\n- questions\n\nIgnore:\n- spam';
    expect(mapAddedLines(before, `${before}\n- ads\n\nNotify:\n- alerts`, ignoreOnly, mark)).toBe(
      `${before}\n- ads [new]\n\nNotify:\n- alerts`,
    );
    const respondLast = 'Ignore:\n- spam\n\nRespond:\n- questions';
    expect(mapAddedLines(respondLast, `${respondLast}\n- lunch`, ignoreOnly, mark)).toBe(
      `${respondLast}\n- lunch`,
    );
  });

  it('lines before any heading are under none; indented headings and lines count', () => {
    const before = 'Ignore:\n- spam';
    expect(mapAddedLines(before, '- top\nIgnore:\n- spam', ignoreOnly, mark)).toBe('- top\nIgnore:\n- spam');
    expect(mapAddedLines('Notify:\n- x', '  Ignore:\n  - ads\nNotify:\n- x', ignoreOnly, mark)).toBe(
      '  Ignore:\n  - ads [new]\nNotify:\n- x',
    );
    // A profile without headings, appended to: nothing is under Ignore.
    expect(mapAddedLines('- a', '- a\n- b', ignoreOnly, mark)).toBe('- a\n- b');
  });

  it('anywhere: the lines the profile did not have, under a matching heading', () => {
    const before = 'Ignore:\n- spam\n\nRespond:\n- questions';
    const after = 'Ignore:\n- ads\n- spam\n\nRespond:\n- lunch\n- questions';
    expect(mapAddedLines(before, after, ignoreOnly, mark)).toBe(
      'Ignore:\n- ads [new]\n- spam\n\nRespond:\n- lunch\n- questions',
    );
  });
});

describe('the lesson of an edit', () => {
  const sender = 'ana@acme.dev';
  const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');

  it('of a reply: shorter, longer or reworded by a fifth of its words; a changed subject or recipient', () => {
    const edit = (content: string, more: Record<string, unknown> = {}) =>
      editLesson(
        {
          proposed: { content: words(10), subject: 's', to: 't' },
          edited: { content, subject: 's', to: 't', ...more },
        },
        sender,
        'reply',
      );
    expect(edit(words(8))).toBe('Prefer shorter replies to ana@acme.dev');
    expect(edit(words(9))).toBe('Word replies to ana@acme.dev the way the user rewrote one');
    expect(edit(words(12))).toBe('Prefer longer, more detailed replies to ana@acme.dev');
    expect(edit(words(11))).toBe('Word replies to ana@acme.dev the way the user rewrote one');
    // Words are what is between white space, wherever it is.
    expect(
      editLesson({ proposed: { content: ` ${words(10)} ` }, edited: { content: words(9) } }, sender, 'reply'),
    ).toBe('Word replies to ana@acme.dev the way the user rewrote one');
    // A reply that had no text, edited to have some: longer.
    expect(editLesson({ proposed: {}, edited: { content: 'Hello there' } }, sender, 'reply')).toBe(
      'Prefer longer, more detailed replies to ana@acme.dev',
    );
    expect(edit(words(10), { subject: 'x', to: 'y' })).toBe(
      'Check the subject of replies to ana@acme.dev (the user changed one); check who replies to ana@acme.dev go to (the user changed it)',
    );
    expect(edit(words(10))).toBe('Review replies to ana@acme.dev closely');
  });

  it('of an invitation: the length, start, weekday, attendees, title and time zone it changed', () => {
    const proposed = {
      duration_minutes: 30,
      start_time: '09:00',
      preferred_day: '2026-11-30',
      attendees: ['a@x'],
      subject: 'Sync',
      time_zone: 'UTC',
    };
    expect(
      editLesson(
        {
          proposed,
          edited: {
            duration_minutes: 45,
            start_time: '14:30',
            preferred_day: '2026-12-04',
            attendees: ['b@x'],
            subject: 'Catch-up',
            time_zone: 'Europe/Berlin',
          },
        },
        sender,
        'invitation',
      ),
    ).toBe(
      'Prefer 45-minute meetings with ana@acme.dev; prefer meetings with ana@acme.dev starting at 14:30; prefer meetings with ana@acme.dev on a Friday; check who is invited to meetings with ana@acme.dev; check the title of invitations to ana@acme.dev; check the time zone of meetings with ana@acme.dev',
    );
    // Values that are not a length, a time or a day are not taken as a preference.
    expect(
      editLesson(
        {
          proposed,
          edited: { ...proposed, duration_minutes: 'long', start_time: '25:00', preferred_day: 'soon' },
        },
        sender,
        'invitation',
      ),
    ).toBe('Check the day of meetings with ana@acme.dev');
    expect(
      editLesson({ proposed, edited: { ...proposed, preferred_day: '2026-13-01' } }, sender, 'invitation'),
    ).toBe('Check the day of meetings with ana@acme.dev');
    for (const start_time of ['at 09:30', '09:30pm'])
      expect(editLesson({ proposed, edited: { ...proposed, start_time } }, sender, 'invitation')).toBe(
        'Review invitations to ana@acme.dev closely',
      );
    expect(
      editLesson({ proposed, edited: { ...proposed, preferred_day: '2026-12-1' } }, sender, 'invitation'),
    ).toBe('Check the day of meetings with ana@acme.dev');
    expect(editLesson({ proposed, edited: proposed }, sender, 'invitation')).toBe(
      'Review invitations to ana@acme.dev closely',
    );
  });
});
