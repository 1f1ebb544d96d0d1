/**
 * How an HTML body becomes the text the assistant and the person read: which elements give it its
 * lines, what is dropped, how text that only looks like markup survives, and what is said when a
 * body is too long or too deep to read whole.
 */
import { describe, expect, it } from 'vitest';
import { cutText, HTML_TEXT_MAX_CHARS, htmlToText, simplifyHtml } from '../src/email/htmlText.js';

describe('the shape of the text', () => {
  it('an opening paragraph, item or cell closes the one before it, as browsers do', () => {
    expect(htmlToText('<p>one<p>two</p>')).toBe('one\n\ntwo');
    expect(htmlToText('<ul><li>a<li>b</ul>')).toBe(' * a\n * b');
    expect(htmlToText('<table><tr><td>a<td>b<tr><th>c<th>d</table>')).toBe('a   b\nc   d');
  });

  it('tags in any case; self-closed elements; line breaks and rules; headings as written, not upper case', () => {
    expect(htmlToText('<BR>up<Br/>per<HR>x')).toBe('up\nper\n\n--------------------\n\nx');
    expect(htmlToText('<p/>self<div/>closed')).toBe('self\n\nclosed');
    expect(htmlToText('<h1>Title</h1><p>text</p>')).toBe('Title\n\ntext');
    expect(htmlToText('<blockquote>q</blockquote><pre>  p  re</pre>')).toBe('> q\n\n  p  re');
  });

  it('blank runs collapse to one blank line, spaces (non-breaking too) to three at most, and ends are trimmed', () => {
    expect(
      htmlToText('<br><br><p>a</p>\n\n\n<p></p><p></p><p>b&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;c</p>   \n<br><br>'),
    ).toBe('a\n\nb   c');
  });

  it('an end tag with nothing to end is dropped, and the text around it kept', () => {
    expect(htmlToText('</p>closing nothing</div> here')).toBe('closing nothing here');
  });
});

describe('what is dropped', () => {
  it('comments, doctypes, processing instructions and bogus end tags', () => {
    expect(htmlToText('<!DOCTYPE html><!-- hidden --><?xml x?>text</ >after')).toBe('textafter');
    expect(htmlToText('x<!-- an unterminated comment hides the rest')).toBe('x');
  });

  it('scripts, styles and titles up to their own end tag; without one, the rest', () => {
    expect(htmlToText('<script>alert("</p>")</scriptx>still</script>shown')).toBe('shown');
    expect(htmlToText('<title>T</title><style>p{}</style><textarea><p>raw</p></textarea>body')).toBe('body');
    expect(htmlToText('before<script>never')).toBe('before');
  });

  it('heads, SVG (nested too), templates, objects and selects with what they hold; a self-closed one holds nothing', () => {
    expect(htmlToText('<head><meta x></head><svg><svg></svg>in</svg>out<svg/>kept')).toBe('outkept');
    expect(
      htmlToText(
        '<noscript>no</noscript><template>t</template><object>o</object><select><option>s</select>ok',
      ),
    ).toBe('ok');
  });

  it('link targets and images; a `>` inside a quoted attribute does not end the tag', () => {
    expect(htmlToText('<a title="x>y" href=\'q>\'>link</a> <img src=a.png alt=pic>')).toBe('link');
    expect(htmlToText('<p class=a"b>q</p>')).toBe('q');
    expect(htmlToText('<p>unterminated <b')).toBe('unterminated');
  });
});

describe('text that only looks like markup', () => {
  it('a `<` that starts no tag is text, and an escaped tag stays text', () => {
    expect(htmlToText('a < b and 1<2 and <3')).toBe('a < b and 1<2 and <3');
    expect(htmlToText('<b>&lt;b&gt;</b>')).toBe('<b>');
  });

  it('a private-use character in the body cannot pass for a `<`', () => {
    expect(htmlToText('pua \ue000 char')).toBe('pua \ufffd char');
  });
});

describe('bodies too long or too deep to read whole', () => {
  it('reading stops once the text fills its limit, and a last line says how much was read', () => {
    const text = htmlToText(`<p>${'x'.repeat(600_000)}`);
    expect(
      text.endsWith(
        `\n\n[The rest of this HTML email was cut: only the first ${HTML_TEXT_MAX_CHARS} of its 600003 characters were read.]`,
      ),
    ).toBe(true);
    // When nothing was read, the note is all there is.
    expect(htmlToText(`<script>${'x'.repeat(600_000)}`)).toBe(
      '[The rest of this HTML email was cut: only the first 500000 of its 600008 characters were read.]',
    );
  });

  it('a cut never falls inside an entity or between the halves of a character', () => {
    const entity = simplifyHtml(`${'y'.repeat(HTML_TEXT_MAX_CHARS - 3)}&nbsp;tail`);
    expect(entity.read).toBe(HTML_TEXT_MAX_CHARS - 3);
    expect(entity.simple.endsWith('y')).toBe(true);
    const emoji = simplifyHtml(`${'y'.repeat(HTML_TEXT_MAX_CHARS - 1)}😀tail`);
    expect(emoji.read).toBe(HTML_TEXT_MAX_CHARS - 1);
    expect(emoji.simple.endsWith('y')).toBe(true);
  });

  it('nesting past the depth limit and elements past their budget keep their text, without their shape', () => {
    expect(htmlToText(`${'<div>'.repeat(40)}deep${'</div>'.repeat(40)}<p>after</p>`)).toBe('deep\n\nafter');
    const lines = htmlToText(`${'<p>a</p>'.repeat(3_001)}<p>z</p>`).split('\n');
    expect(lines.filter((l) => l === 'a')).toHaveLength(3_000);
    expect(lines.at(-1)).toBe('a z');
  });

  it('a text body is cut with a line saying how long it was; one exactly at the limit is kept whole', () => {
    expect(cutText('abc', 3)).toBe('abc');
    expect(cutText('abcd   efgh'.repeat(20), 150)).toBe(
      'abcd   efghabcd   efghabcd   efghabcd   efghabcd   efgh\n\n[The rest of this email was cut: it is 220 characters long, and only the first 150 are kept.]',
    );
  });
});
