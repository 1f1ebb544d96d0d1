/**
 * HTML bodies that stall naive converters (regexes that backtrack, parsers that recurse or shift
 * their stack per element), each built to about `size` characters, and an ordinary newsletter.
 * Shared by the HTML tests and `bench/htmlToText.ts`.
 */
export function hostileHtmlBodies(size: number): Record<string, string> {
  const repeat = (unit: string, prefix = '') =>
    prefix + unit.repeat(Math.floor((size - prefix.length) / unit.length));
  return {
    'lt without gt': repeat('<'),
    'lt then letters without gt': repeat('<a'),
    'blank lines': repeat('\n'),
    'nbsp runs': repeat('&nbsp;'),
    'br runs': repeat('<br>'),
    'unclosed script': repeat('x<', '<p>Before</p><script>'),
    'unclosed comment': repeat('-', '<p>Before</p><!--'),
    'unterminated attribute': repeat('x', '<p>Before</p><a href="'),
    'deeply nested divs': repeat('<div>'),
    'deeply nested inline tags': repeat('<span><b>'),
    'nested tables': repeat('<table><tr><td>'),
    'unclosed paragraphs': repeat('<p>x'),
    'list items': repeat('<li>item', '<ul>'),
    'closing tags only': repeat('</div>'),
    entities: repeat('&#x41;&amp;&lt;'),
    newsletter: repeat(NEWSLETTER_STORY, NEWSLETTER_HEAD),
  };
}

const NEWSLETTER_HEAD = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>The Weekly Byte</title>
<style>body{font-family:Arial} .story td{padding:8px} a{color:#06c}</style></head>
<body style="margin:0"><table role="presentation" width="100%" cellpadding="0"><tr><td align="center">
<h1 style="font-size:24px">The Weekly Byte</h1>`;

const NEWSLETTER_STORY = `<table class="story" role="presentation"><tr><td style="padding:12px;border-bottom:1px solid #eee">
<img src="https://cdn.example/thumb.png" alt="thumbnail" width="80"><h2>New runtime release</h2>
<p>Faster startup and <strong>smaller</strong> images. <a href="https://bytes.example/r?id=1&amp;utm_source=mail">Read more</a></p>
</td></tr></table>\n`;

/** A newsletter of the kind people subscribe to: layout tables, a price table, links, images, a footer. */
export const NEWSLETTER_HTML = `${NEWSLETTER_HEAD}
<table class="story" role="presentation"><tr><td style="padding:12px">
<img src="https://cdn.example/hero.png" alt="Hero image" width="600">
<h2 style="color:#333">Bundlers, compared</h2>
<p>We measured five bundlers on a <em>real</em> app.&nbsp;The results surprised us.</p>
<p><a href="https://bytes.example/bundlers?utm_source=newsletter&amp;utm_medium=email">Read the full comparison</a></p>
</td></tr></table>
<table class="prices"><tr><th>Plan</th><th>Price</th></tr><tr><td>Free</td><td>&euro;0</td></tr><tr><td>Pro</td><td>&euro;12</td></tr></table>
<ul><li>Jobs: 14 new openings</li><li>Events: JSConf in May</li></ul>
<p style="font-size:11px;color:#999">You receive this because you subscribed.<br>
<a href="https://bytes.example/unsubscribe?u=abc">Unsubscribe</a> &middot; &copy; 2026 The Weekly Byte</p>
<script>track('open')</script></td></tr></table></body></html>`;
