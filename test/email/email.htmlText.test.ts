import { describe, expect, it } from 'vitest';
import { gmailMessageToInput } from '../../src/adapters/gmail/gmailMessage.js';
import { parseEmail } from '../../src/email/emailInput.js';
import { BODY_MAX_CHARS, cutText, HTML_TEXT_MAX_CHARS, htmlToText } from '../../src/email/htmlText.js';
import { hostileHtmlBodies, NEWSLETTER_HTML } from '../support/hostileHtml.js';

const CUT_NOTE =
  /\[The rest of this HTML email was cut: only the first \d+ of its \d+ characters were read\.\]$/u;

/** What any text the assistant keeps must be: bounded, no markup left, no blank runs, no stray entities. */
function problems(text: string): string[] {
  const checks: [string, boolean][] = [
    ['too long', text.length > HTML_TEXT_MAX_CHARS + 200],
    ['markup left', /<\/?(script|div|p|span|table|td|br|a|img|style)\b[^<]*>/u.test(text)],
    ['blank run', text.includes('\n\n\n')],
    ['entity left', /&(nbsp|amp|lt|#x41);/u.test(text)],
    ['no-break space', text.includes('\u00a0')],
    ['placeholder', text.includes('\ue000')],
    ['trailing space', /[ \t]\n/u.test(text)],
  ];
  return checks.filter(([, bad]) => bad).map(([what]) => what);
}

describe('HTML email bodies as text', () => {
  it('a newsletter reads as its text: headings, paragraphs, table rows, list items; no styles, scripts, link targets or image names', () => {
    expect(htmlToText(NEWSLETTER_HTML)).toBe(
      [
        'The Weekly Byte',
        '',
        'Bundlers, compared',
        '',
        'We measured five bundlers on a real app. The results surprised us.',
        '',
        'Read the full comparison',
        '',
        'Plan   Price',
        'Free   €0',
        'Pro   €12',
        '',
        ' * Jobs: 14 new openings',
        ' * Events: JSConf in May',
        '',
        'You receive this because you subscribed.',
        'Unsubscribe · © 2026 The Weekly Byte',
      ].join('\n'),
    );
  });

  it('keeps text that looks like markup but is not, and reads quoted attributes whole', () => {
    expect(
      htmlToText('<p title="a > b" data-x=\'<p>\'>1 < 2 and 3 > 2, a <- b</p><!-- <p>hidden</p> -->'),
    ).toBe('1 < 2 and 3 > 2, a <- b');
    expect(htmlToText('<p>caf&eacute; &#x1F600; &#128512; &bogus; &amp;amp;</p>')).toBe(
      'café 😀 😀 &bogus; &amp;',
    );
  });

  it.each([100_000, 2_000_000])('hostile bodies of %i characters come out as sane, bounded text', (size) => {
    const bodies = hostileHtmlBodies(size);
    const text = Object.fromEntries(Object.entries(bodies).map(([name, html]) => [name, htmlToText(html)]));
    for (const [name, value] of Object.entries(text)) {
      expect(problems(value), name).toEqual([]);
      // Everything over the caps is cut with a line saying so; a body read whole has none.
      expect(CUT_NOTE.test(value), name).toBe(size > 500_000);
    }
    const body = (name: string) => (text[name] ?? '').replace(CUT_NOTE, '').trimEnd();
    expect(body('unclosed script')).toBe('Before');
    expect(body('unclosed comment')).toBe('Before');
    expect(body('unterminated attribute')).toBe('Before');
    for (const empty of [
      'blank lines',
      'nbsp runs',
      'deeply nested divs',
      'deeply nested inline tags',
      'nested tables',
      'closing tags only',
    ])
      expect(body(empty), empty).toBe('');
    expect(/^<{1000,}$/u.test(body('lt without gt'))).toBe(true);
    expect(body('list items').split('\n').slice(0, 3)).toEqual([' * item', ' * item', ' * item']);
    expect(/^(A&<){1000,}(A&?)?$/u.test(body('entities'))).toBe(true);
    expect(body('newsletter')).toMatch(
      /^The Weekly Byte\n\nNew runtime release\n\nFaster startup and smaller images\. Read more\n\n/u,
    );
  });

  it('a long text is cut to size with a line saying how much was left out', () => {
    const long = 'word '.repeat(60_000);
    const cut = cutText(long);
    expect(cut.length).toBeLessThanOrEqual(BODY_MAX_CHARS);
    expect(cut).toMatch(
      /\n\n\[The rest of this email was cut: it is 300000 characters long, and only the first 200000 are kept\.\]$/u,
    );
    expect(cutText('short')).toBe('short');
  });
});

describe('every way HTML reaches the assistant goes through the one converter', () => {
  const hostile = `<p>Hello</p>${'<div>'.repeat(400_000)}`;
  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

  it('a Gmail message with only an HTML part', () => {
    const input = gmailMessageToInput(
      {
        id: 'g1',
        payload: {
          mimeType: 'text/html',
          headers: [
            { name: 'From', value: 'a@x.example' },
            { name: 'Subject', value: 'HTML' },
          ],
          body: { data: b64(hostile) },
        },
      },
      'sam@acme.dev',
    );
    expect(input.body).toMatch(/^Hello\n\n\[The rest of this HTML email was cut/u);
  });

  it('a Gmail message whose plain text is too long is cut with a line saying so', () => {
    const input = gmailMessageToInput(
      {
        id: 'g2',
        payload: { mimeType: 'text/plain', headers: [], body: { data: b64('x'.repeat(250_000)) } },
      },
      'sam@acme.dev',
    );
    expect(input.body.length).toBeLessThanOrEqual(BODY_MAX_CHARS);
    expect(input.body).toMatch(/\[The rest of this email was cut/u);
  });

  it('the Gmail shape with `html`, an HTML document as body, a mock thread, a chat email in text/html', () => {
    const base = { id: 'h1', from: 'a@x.example', to: 'sam@acme.dev', subject: 'HTML' };
    const inputs: unknown[] = [
      { ...base, html: hostile },
      { ...base, body: `<!DOCTYPE html><html><body>${hostile}` },
      {
        id: 'h2',
        author: 'a@x.example',
        to: 'sam@acme.dev',
        subject: 'HTML',
        email_thread: `  <html>${hostile}`,
      },
      {
        id: 'h3',
        content: `From: a@x.example\nTo: sam@acme.dev\nContent-Type: text/html; charset=utf-8\n\n${hostile}`,
      },
    ];
    for (const input of inputs) {
      const parsed = parseEmail(input);
      expect(parsed.ok).toBe(true);
      if (parsed.ok) expect(parsed.email.body).toMatch(/^Hello\n\n\[The rest of this HTML email was cut/u);
    }
    // Plain text that merely mentions a tag is left as it is.
    const plain = parseEmail({ ...base, body: 'Use <div> for blocks & <p> for text.' });
    expect(plain.ok && plain.email.body).toBe('Use <div> for blocks & <p> for text.');
  });
});
