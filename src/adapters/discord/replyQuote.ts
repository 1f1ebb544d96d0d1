import { neutralizeMentions } from '../../delivery/neutralizeMentions.js';

/** Characters a quote line may take; the transport's text limit leaves this much room for it. */
export const QUOTE_RESERVE = 240;
// Escaped snippet length: with the mention (≤ 27) and the link (≤ 100) the line stays in the reserve.
const SNIPPET = 100;

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
 * mentions in the quoted text are made inert.
 */
export function replyQuote(target: QuoteTarget): string {
  const who = target.authorId ? `<@${target.authorId}>` : 'a message';
  const link = `[↗](${jumpLink(target)})`;
  // Only the start can show; the rest is never looked at.
  const text = (target.text ?? '')
    .slice(0, 4 * SNIPPET)
    .replace(/\s+/gu, ' ')
    .trim();
  if (text === '') return `> ↪ ${who} ${link}`;
  // Whole graphemes while the escaped snippet fits (an emoji may be many code units).
  const inertText = (s: string) => neutralizeMentions(s).replace(/([\\*_~`|>[\]()#-])/gu, '\\$1');
  let inert = '';
  let used = '';
  for (const { segment } of new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(text)) {
    const next = inertText(used + segment);
    if (next.length > SNIPPET) {
      inert = `${inertText(used.trimEnd())}…`;
      break;
    }
    used += segment;
    inert = next;
  }
  return `> ↪ ${who}: ${inert} ${link}`;
}
