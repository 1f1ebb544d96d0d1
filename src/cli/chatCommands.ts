import { terminalText } from '../delivery/terminalText.js';
import { findAvatar, noSuchAvatar } from './chatAvatars.js';
import { postTyped } from './chatPost.js';
import { type ChatRoom, livesHere, presentIds } from './chatRoom.js';
import { showWho } from './chatWho.js';

const HELP = [
  'Type a message and press Enter; everyone in the channel hears it. Avatars answer when addressed',
  'by name (or @name), when you reply to them, or when the talk is about their topics.',
  '  /summon <name>      bring an avatar into the channel (it greets, then follows up)',
  '  /dismiss <name>     send an avatar away',
  '  /reply <n> <text>   reply to message [n]   (shortcut: >n <text>)',
  '  /who                who is here, who is not, open threads, and usage today with the caps',
  '  /help               this list',
  '  /quit               leave (Ctrl+D works too)',
];

/** Runs a slash command typed in the chat (`line` starts with `/`); `'quit'` when it ends the chat. */
export function runChatCommand(room: ChatRoom, line: string): 'quit' | undefined {
  const [head = ''] = line.slice(1).split(/\s+/u);
  const rest = line.slice(1 + head.length).trim();
  switch (head.toLowerCase()) {
    case 'summon': {
      const problem = summon(room, rest);
      if (problem !== undefined) room.oops(problem);
      return undefined;
    }
    case 'dismiss': {
      const problem = dismiss(room, rest);
      if (problem !== undefined) room.oops(problem);
      return undefined;
    }
    case 'reply':
    case 'r': {
      const match = /^#?(\d+)\s+([\s\S]+)$/u.exec(rest);
      if (!match?.[1] || !match[2]) return void room.oops('Usage: /reply <n> <text>  (or >n <text>)');
      postTyped(room, match[2].trim(), match[1]);
      return undefined;
    }
    case 'who':
      showWho(room);
      return undefined;
    case 'help':
    case '?':
      for (const l of HELP) room.say(l);
      return undefined;
    case 'quit':
    case 'exit':
      return 'quit';
    default:
      room.oops(`Unknown command "/${terminalText(head)}". /help lists the commands.`);
      return undefined;
  }
}

/** `/summon <name>`: brings the avatar into the channel, unless it lives there and is here; else the problem. */
function summon(room: ChatRoom, rest: string): string | undefined {
  if (!rest) return 'Usage: /summon <name>';
  const avatar = findAvatar(room.avatars, rest);
  if (!avatar) return noSuchAvatar(room.avatars, rest);
  if (presentIds(room).includes(avatar.id) && livesHere(room, avatar)) {
    return `${avatar.name} lives here already; just talk to ${avatar.name}.`;
  }
  room.runtime.send({ type: 'avatar.summon', channel: room.channel, avatarId: avatar.id, by: room.human });
  return undefined;
}

/** `/dismiss <name>`: sends the avatar away if it is here; else the problem. */
function dismiss(room: ChatRoom, rest: string): string | undefined {
  if (!rest) return 'Usage: /dismiss <name>';
  const avatar = findAvatar(room.avatars, rest);
  if (!avatar) return noSuchAvatar(room.avatars, rest);
  if (!presentIds(room).includes(avatar.id)) return `${avatar.name} is not here.`;
  room.runtime.send({ type: 'avatar.dismiss', channel: room.channel, avatarId: avatar.id });
  return undefined;
}
