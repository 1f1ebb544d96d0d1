import type { AvatarDefinition } from '../actors/avatarDefinition.js';
import type { Runtime, SendResult } from '../actors/runtimeOptions.js';
import type { TerminalMessage, TerminalTransport } from '../adapters/terminal/terminalTransport.js';
import type { ChannelRef } from '../ports/outgoingResponse.js';

/**
 * Avatar ids written as `@Name` (or `@alias`, `@id`) in a message, for the platform-style
 * `mentions` of a `channel.message` (a name without `@` is found by the floor itself).
 */
export function atMentions(text: string, avatars: readonly AvatarDefinition[]): string[] {
  const ids = new Set<string>();
  const lower = text.toLocaleLowerCase('en');
  for (let at = lower.indexOf('@'); at >= 0; at = lower.indexOf('@', at + 1)) {
    const rest = lower.slice(at + 1);
    for (const a of avatars) {
      const hit = [a.id, a.name, ...(a.aliases ?? [])].some((label) => {
        const l = label.toLocaleLowerCase('en');
        return rest.startsWith(l) && !/^[\p{L}\p{N}_]/u.test(rest.slice(l.length));
      });
      if (hit) ids.add(a.id);
    }
  }
  return [...ids];
}

/**
 * A person's message in a terminal channel: numbered by the transport (so it can be replied to),
 * then sent to the runtime with its `@` mentions and, for a reply, the message (and avatar) it
 * answers. `troupe chat` and the studio's playground post this way.
 */
export function postTerminalMessage(
  runtime: Runtime,
  transport: TerminalTransport,
  input: {
    channel: ChannelRef;
    author: { id: string; name: string };
    text: string;
    replyTo?: TerminalMessage;
  },
): { message: TerminalMessage; mentions: string[]; result: SendResult } {
  const { channel, author, text, replyTo } = input;
  const mentions = atMentions(text, runtime.avatars);
  const message = transport.recordInbound({
    channelId: channel.id,
    author: { kind: 'human', ...author },
    text,
    ...(replyTo ? { replyTo: { messageId: replyTo.messageId } } : {}),
  });
  const result = runtime.send({
    type: 'channel.message',
    channel,
    messageId: message.messageId,
    author: { kind: 'human', ...author },
    text,
    ...(mentions.length > 0 ? { mentions } : {}),
    ...(replyTo
      ? {
          replyTo: {
            messageId: replyTo.messageId,
            ...(replyTo.author.kind === 'avatar' ? { avatarId: replyTo.author.id } : {}),
          },
        }
      : {}),
  });
  return { message, mentions, result };
}
