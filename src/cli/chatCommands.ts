import type { AvatarDefinition } from '../actors/avatarDefinition.js';
import { terminalText } from '../delivery/terminalText.js';
import { TroupeError } from '../ports/troupeError.js';
import { avatarsStartingWith, findAvatarByQuery as findAvatar } from '../textRules/avatarQuery.js';
import { avatarLabel, noSuchAvatar } from './chatAvatars.js';
import { postTyped } from './chatPost.js';
import { type ChatRoom, livesHere, presentIds } from './chatRoom.js';
import { showWho } from './chatWho.js';

const HELP = [
  'Type a message and press Enter; everyone in the channel hears it. Avatars answer when addressed',
  'by name (or @name), when you reply to them, or when the talk is about their topics.',
  '  /summon <name>      bring an avatar into the channel (it greets, then follows up); a name',
  '                      nobody has creates a new avatar (unless TROUPE_SUMMON_CREATES=false)',
  '  /dismiss <name>     send an avatar away',
  '  /forget <name>      remove an avatar that summoning created (from every channel and the store)',
  '  /avatars            every avatar: who is here, and who summoning created',
  '  /reply <n> <text>   reply to message [n]   (shortcut: >n <text>)',
  '  /who                who is here, who is not, open threads, and usage today with the caps',
  '  /help               this list',
  '  /quit               leave (Ctrl+D works too)',
];

/**
 * Runs a slash command typed in the chat (`line` starts with `/`); `'quit'` when it ends the chat.
 * Resolves once the command's own work is done (creating an avatar waits on the model).
 */
export async function runChatCommand(room: ChatRoom, line: string): Promise<'quit' | undefined> {
  const [head = ''] = line.slice(1).split(/\s+/u);
  const rest = line.slice(1 + head.length).trim();
  switch (head.toLowerCase()) {
    case 'summon': {
      const problem = await summon(room, rest);
      if (problem !== undefined) room.oops(problem);
      return undefined;
    }
    case 'forget': {
      const problem = await forget(room, rest);
      if (problem !== undefined) room.oops(problem);
      return undefined;
    }
    case 'avatars':
      showAvatars(room);
      return undefined;
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

/**
 * `/summon <name>`: brings the avatar into the channel, unless it lives there and is here; a name
 * nobody has creates the avatar first (when creation is on). Else the problem.
 */
async function summon(room: ChatRoom, rest: string): Promise<string | undefined> {
  if (!rest) return 'Usage: /summon <name>';
  const avatar = findAvatar(room.avatars, rest) ?? (await created(room, rest));
  if (typeof avatar === 'string') return avatar;
  if (presentIds(room).includes(avatar.id) && livesHere(room, avatar)) {
    return `${avatar.name} lives here already; just talk to ${avatar.name}.`;
  }
  room.runtime.send({ type: 'avatar.summon', channel: room.channel, avatarId: avatar.id, by: room.human });
  return undefined;
}

/** The avatar summoning `name` creates (or finds, made meanwhile elsewhere), or why there is none. */
async function created(room: ChatRoom, name: string): Promise<AvatarDefinition | string> {
  const several = avatarsStartingWith(room.avatars, name);
  if (several.length > 0)
    return `"${terminalText(name)}" could be ${several.map(avatarLabel).join(' or ')}; type more of the name.`;
  try {
    const made = await room.runtime.createAvatar({ name, by: room.human, channel: room.channel });
    if (made.created) {
      const how =
        made.avatar.created?.persona === 'model'
          ? 'the model wrote its persona'
          : 'a template persona: no language model wrote it';
      room.say(
        `✨ New avatar ${avatarLabel(made.avatar)} ${room.dim(`(${how})`)}: ${terminalText(made.avatar.persona ?? '')}`,
      );
    }
    return made.avatar;
  } catch (error) {
    if (!TroupeError.isInstance(error)) throw error;
    if (error.code === 'TROUPE_AVATAR_CREATION_OFF') return noSuchAvatar(room.avatars, name);
    return terminalText(error.message);
  }
}

/** `/forget <name>`: removes an avatar summoning created; else the problem. */
async function forget(room: ChatRoom, rest: string): Promise<string | undefined> {
  if (!rest) return 'Usage: /forget <name>';
  const avatar = findAvatar(room.avatars, rest);
  try {
    const gone = await room.runtime.forgetAvatar(avatar?.id ?? rest);
    room.say(`${avatarLabel(gone)} is forgotten: gone from every channel and the store.`);
    return undefined;
  } catch (error) {
    if (!TroupeError.isInstance(error)) throw error;
    return terminalText(error.message);
  }
}

/** `/avatars`: every avatar, here or not, and who created the ones summoning made. */
function showAvatars(room: ChatRoom): void {
  const here = new Set(presentIds(room));
  for (const a of room.avatars) {
    const notes = [
      here.has(a.id) ? 'here' : 'not here',
      ...(a.created
        ? [
            `created by ${terminalText(a.created.by.name)} on ${new Date(a.created.at).toISOString().slice(0, 10)}`,
          ]
        : []),
    ];
    room.say(`${avatarLabel(a)} ${room.dim(`(${a.id}; ${notes.join(', ')})`)}`);
  }
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
