import { neutralizeMentions } from '../../delivery/neutralizeMentions.js';

/** Characters a quote line may take; the transport's text limit leaves this much room for it. */
export const QUOTE_RESERVE = 240;
// Escaped snippet length: with the mention (≤ 27) and the link (≤ 100) the line stays in the reserve.
const SNIPPET = 100;
// Made once: building a segmenter costs more than segmenting a snippet.
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
// Markdown that would change how the quoted text reads.
const MARKDOWN = /([\\*_~`|>[\]()#-])/gu;
const INERT = new Set('\\*_~`|>[]()#-');
// Bidi controls: in a quote they would reverse the rest of the line (the link included) on screen.
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
// Latin, Greek, Cyrillic and the like without combining marks: one character is one grapheme.
const SIMPLE = /^[\u0020-\u02ff\u0370-\u0482\u048a-\u052f]*$/u;

/** The message an answer replies to, as far as it is known. */
export interface QuoteTarget {
  guildId?: string;
  channelId: string;
  messageId: string;
  authorId?: string;
  text?: string;
}

/** A link that opens a message in Discord. */
export function jumpLink(target: Pick<QuoteTarget, 'guildId' | 'channelId' | 'messageId'>): string {
  return `https://discord.com/channels/${target.guildId ?? '@me'}/${target.channelId}/${target.messageId}`;
}

/**
 * The line an avatar's answer starts with, since webhooks cannot send native replies: who it
 * answers (a mention, which pings only if the message's allowed mentions say so), the start of
 * their message, and a jump link to it. At most {@link QUOTE_RESERVE} characters; markdown and
 * mentions in the quoted text are made inert, and bidi controls dropped.
 */
export function replyQuote(target: QuoteTarget): string {
  const who = target.authorId ? `<@${target.authorId}>` : 'a message';
  const link = `[↗](${jumpLink(target)})`;
  // Only the start can show; the rest is never looked at.
  const text = (target.text ?? '')
    .slice(0, 4 * SNIPPET)
    .replace(BIDI_CONTROLS, '')
    .replace(/\s+/gu, ' ')
    .trim();
  if (text === '') return `> ↪ ${who} ${link}`;
  // Whole graphemes while the escaped snippet fits (an emoji may be many code units). Text with
  // no combining marks, emoji or other scripts' clusters is cut per character: segmenting costs.
  const safe = neutralizeMentions(text);
  const pieces = SIMPLE.test(safe) ? safe : Array.from(graphemes.segment(safe), (s) => s.segment);
  let inert = '';
  let clipped = false;
  for (const piece of pieces) {
    const escaped =
      piece.length === 1 ? (INERT.has(piece) ? `\\${piece}` : piece) : piece.replace(MARKDOWN, '\\$1');
    if (inert.length + escaped.length > SNIPPET - 1) {
      clipped = true;
      break;
    }
    inert += escaped;
  }
  if (clipped) inert = `${inert.trimEnd()}…`;
  return `> ↪ ${who}: ${inert} ${link}`;
}

/**
 * True when `posted` is the same answer as `content`, both starting with a quote line of the
 * message `messageId`: the quote is rebuilt from Discord after a restart (the text as Discord
 * stores it, or nothing once deleted), so it may read differently than the first time.
 */
export function sameQuotedAnswer(posted: string, content: string, messageId: string): boolean {
  const split = (text: string): [string, string] => {
    const end = text.indexOf('\n');
    return end < 0 ? [text, ''] : [text.slice(0, end), text.slice(end + 1)];
  };
  const [postedQuote, postedBody] = split(posted);
  const [quote, body] = split(content);
  const links = (line: string) => line.startsWith('> ↪') && line.endsWith(`/${messageId})`);
  return links(postedQuote) && links(quote) && postedBody === body;
}
