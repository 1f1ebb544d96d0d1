import type { ChannelHistoryEntry } from '../ports/history.js';
import type { PromptMessage } from '../ports/model.js';

/** Most history messages a turn prompt carries by default. */
export const DEFAULT_HISTORY_LIMIT = 20;

/** Most characters of history (message contents added up) a turn prompt carries by default. */
export const DEFAULT_HISTORY_CHARS = 6000;

/** Cuts text to `max` characters, marking the cut with an ellipsis. */
function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/**
 * Turns recent channel history into chat messages for the avatar `avatarId`, oldest first.
 *
 * The avatar's own lines become `assistant` messages; everyone else's (people and other avatars)
 * become `user` messages with `name` set and the text prefixed `Name: `, so who said what survives
 * providers that drop `name`. Blank messages are skipped. At most `limit` messages are kept, and
 * at most `maxChars` characters of content in all: the oldest go first. The newest message is
 * always kept, cut to `maxChars` if it alone is longer.
 */
export function historyMessages(
  history: readonly ChannelHistoryEntry[],
  avatarId: string,
  limit: number = DEFAULT_HISTORY_LIMIT,
  maxChars: number = DEFAULT_HISTORY_CHARS,
): PromptMessage[] {
  if (limit <= 0 || maxChars <= 0) return [];
  // `sort` is stable: entries written in the same millisecond keep the order they came in.
  const recent = history
    .filter((entry) => entry.text.trim() !== '')
    .slice()
    .sort((a, b) => a.at - b.at)
    .slice(-limit);

  const kept: PromptMessage[] = [];
  let used = 0;
  for (let i = recent.length - 1; i >= 0; i -= 1) {
    const entry = recent[i] as ChannelHistoryEntry;
    const message = toMessage(entry, avatarId);
    if (kept.length === 0 && message.content.length > maxChars) {
      kept.push({ ...message, content: cut(message.content, maxChars) });
      break;
    }
    if (used + message.content.length > maxChars) break;
    used += message.content.length;
    kept.push(message);
  }
  return kept.reverse();
}

function toMessage(entry: ChannelHistoryEntry, avatarId: string): PromptMessage {
  const text = entry.text.trim();
  if (entry.author.kind === 'avatar' && entry.author.id === avatarId) {
    return { role: 'assistant', content: text };
  }
  return { role: 'user', name: entry.author.name, content: `${entry.author.name}: ${text}` };
}
