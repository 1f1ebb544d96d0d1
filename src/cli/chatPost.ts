import type { TerminalMessage } from '../adapters/terminal/terminalTransport.js';
import { postTerminalMessage } from '../app/terminalChannel.js';
import { namesAvatar } from './chatAvatars.js';
import { type ChatRoom, presentIds } from './chatRoom.js';

/**
 * Posts what the person typed, as a reply to message `[replyToNumber]` when given, and notes each
 * avatar it names or mentions that is not in the channel to hear it.
 */
export function postTyped(room: ChatRoom, text: string, replyToNumber?: string): void {
  const { runtime, transport, avatars } = room;
  let target: TerminalMessage | undefined;
  if (replyToNumber !== undefined) {
    target = transport.lookup(replyToNumber);
    if (!target) {
      const kept = transport.recent();
      const range =
        kept.length > 0 ? `messages [${kept[0]?.number}] to [${kept.at(-1)?.number}]` : 'no messages yet';
      room.oops(`There is no message [${replyToNumber}] to reply to (${range}).`);
      return;
    }
  }
  room.terminal.eraseTypedLine(); // the typed line is reprinted with its number
  const here = presentIds(room);
  // A rejection (too long, runtime stopping) is reported on errors$, which the printer shows.
  const { mentions } = postTerminalMessage(runtime, transport, {
    channel: room.channel,
    author: room.human,
    text,
    ...(target ? { replyTo: target } : {}),
  });
  const absent = avatars.filter(
    (a) => !here.includes(a.id) && (mentions.includes(a.id) || namesAvatar(a, text)),
  );
  for (const a of absent)
    room.say(room.dim(`  (${a.name} is not here and cannot hear you: /summon ${a.name})`));
}
