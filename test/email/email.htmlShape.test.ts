/**
 * How an HTML body becomes the text the assistant and the person read: which elements give it its
 * lines, what is dropped, how text that only looks like markup survives, and what is said when a
 * body is too long or too deep to read whole.
 */
import { describe, expect, it } from 'vitest';
import { cutText, HTML_TEXT_MAX_CHARS, htmlToText, simplifyHtml } from '../../src/email/htmlText.js';

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

describe('tag names, attributes and raw text', () => {
  it('a tag name is ASCII letters, digits, `-`, `:` and `_`: `<br0>` or `<br-x>` is no line break, `<p{>` is a paragraph', () => {
    expect(htmlToText('a<br0>b<br9>c<br-x>d<br:x>e<br_x>f<brz>g<p{>h')).toBe('abcdefg\n\nh');
    expect(htmlToText('a<zoo>b <{b> c')).toBe('ab <{b> c');
  });

  it('only a quote right after `=` (spaces allowed) starts a quoted value', () => {
    expect(htmlToText('<p"a>b">c')).toBe('b">c');
    expect(htmlToText('<a href= "x>y">link</a>')).toBe('link');
  });

  it('a raw-text element ends at its own end tag after it, in any case; without a `>` the rest is dropped', () => {
    expect(htmlToText('<SCRIPT>x</SCRIPT>y')).toBe('y');
    expect(htmlToText('a</style>b<style>x</style>c')).toBe('abc');
    expect(htmlToText('a<script>x</script ')).toBe('a');
  });

  it('a skipped element ends at its own end tag, not at the end tag of an element inside it', () => {
    expect(htmlToText('<svg><text>t</text>in</svg>out')).toBe('out');
  });

  it('a comment ends at `-->`, not at a `>` inside it nor at a `-->` before it', () => {
    expect(htmlToText('<!-- if a > b -->text')).toBe('text');
    expect(htmlToText('x--><!-- c -->y')).toBe('x-->y');
  });

  it('a kept tag the input ends inside is dropped; a `&` at the very end is text', () => {
    expect(htmlToText('a <hr')).toBe('a');
    expect(htmlToText('fish &chips')).toBe('fish &chips');
  });

  it('the reduced HTML holds the kept elements only, without their attributes', () => {
    expect(simplifyHtml('<span class=a>x</span><p id=b>y</p>').simple).toBe('x<p>y</p>');
  });

  it('blank lines inside `<pre>` collapse to one too', () => {
    expect(htmlToText('<pre>a\nb\n\n\n\nc</pre>')).toBe('a\nb\n\nc');
  });
});

describe('how deep the kept elements go', () => {
  const quoted = (depth: number, text: string) => `${'> '.repeat(depth)}${text}`;

  it('32 levels are kept; a deeper element keeps its text, and its end tag ends only it', () => {
    expect(htmlToText(`${'<blockquote>'.repeat(33)}q`)).toBe(quoted(32, 'q'));
    const lines = htmlToText(`${'<blockquote>'.repeat(33)}a</blockquote>b</blockquote>c`).split('\n');
    expect(lines[0]).toBe(quoted(32, 'a b'));
    expect(lines.at(-1)).toBe(quoted(31, 'c'));
    expect(htmlToText(`${'<div>'.repeat(32)}a<div>b</div>c`)).toBe('a b c');
  });

  it('line breaks, items closing the one before, and end tags closing what is inside them keep the depth down', () => {
    expect(htmlToText(`x${'<br>'.repeat(40)}<p>a</p><p>b</p>`)).toBe('x\n\na\n\nb');
    expect(htmlToText(`<ul>${'<li>x'.repeat(40)}</ul>`).split('\n')).toEqual(Array(40).fill(' * x'));
    expect(htmlToText(`<div><p>a</div>${'<blockquote>'.repeat(32)}q`)).toBe(`a\n\n${quoted(32, 'q')}`);
  });

  it('an end tag with nothing to end changes no depth', () => {
    expect(htmlToText(`${'<blockquote>'.repeat(32)}</p><blockquote>q`)).toBe(quoted(32, 'q'));
    const lines = htmlToText(`<blockquote><p>a</p></p>${'<blockquote>'.repeat(32)}q`).split('\n');
    expect(lines.at(-1)).toBe(quoted(32, 'q'));
  });
});

describe('where reading stops', () => {
  it('text that fills the limit exactly is read whole, even ending in `&`', () => {
    const html = `${'x'.repeat(HTML_TEXT_MAX_CHARS - 1)}&`;
    expect(htmlToText(html).endsWith('x&')).toBe(true);
    expect(simplifyHtml(html).read).toBe(html.length);
  });

  it('text past the limit before a tag stops reading there', () => {
    expect(htmlToText(`${'x'.repeat(HTML_TEXT_MAX_CHARS + 10)}<p>after`)).toMatch(
      /x\n\n\[The rest of this HTML email was cut: only the first 100000 of its 100018 characters were read\.\]$/u,
    );
  });

  it('HTML past its cap is not read, and its cut does not fall inside an entity', () => {
    const comment = `<!--${'c'.repeat(499_980)}-->`;
    expect(htmlToText(`${comment}${'y'.repeat(20)}<b>z`)).toBe(
      `${'y'.repeat(13)}\n\n[The rest of this HTML email was cut: only the first 500000 of its 500011 characters were read.]`,
    );
    expect(htmlToText(`${comment}${'y'.repeat(9)}&nbsp;zz${'w'.repeat(20)}`)).toBe(
      `${'y'.repeat(9)}\n\n[The rest of this HTML email was cut: only the first 499996 of its 500024 characters were read.]`,
    );
  });

  it('a cut moves back over the first half of any character outside the first plane, and only that', () => {
    const at = HTML_TEXT_MAX_CHARS;
    expect(simplifyHtml(`${'y'.repeat(at - 1)}\ud800\udc00tail`).read).toBe(at - 1);
    expect(simplifyHtml(`${'y'.repeat(at - 1)}\udbff\udc00tail`).read).toBe(at - 1);
    expect(simplifyHtml(`${'y'.repeat(at - 2)}😀tail`).read).toBe(at);
    expect(simplifyHtml(`${'y'.repeat(at - 1)}\ue001tail`).read).toBe(at);
  });

  it('a `&` more than 32 characters before the cut starts no entity', () => {
    expect(simplifyHtml(`${'y'.repeat(HTML_TEXT_MAX_CHARS - 50)}&${'z'.repeat(100)}`).read).toBe(
      HTML_TEXT_MAX_CHARS,
    );
  });

  it('a cut text body loses its trailing spaces, not its leading ones', () => {
    expect(cutText(`  ${'ab   '.repeat(40)}`, 120)).toBe(
      '  ab   ab   ab   ab   ab\n\n[The rest of this email was cut: it is 202 characters long, and only the first 120 are kept.]',
    );
  });
});
