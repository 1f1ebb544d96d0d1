import type { AvatarDefinition } from '../actors/avatarDefinition.js';
import { terminalText } from '../delivery/terminalText.js';

/** How the chat names an avatar: its emoji (if any) and its name. */
export function avatarLabel(avatar: AvatarDefinition): string {
  return avatar.emoji ? `${avatar.emoji} ${avatar.name}` : avatar.name;
}

/** What the chat says when no avatar answers to `raw`: the avatars there are. */
export function noSuchAvatar(avatars: readonly AvatarDefinition[], raw: string): string {
  return `No avatar called "${terminalText(raw)}". Avatars: ${avatars.map((a) => `${avatarLabel(a)} (${a.id})`).join(', ')}. Use a name, an alias or an id.`;
}

/** Whether the text names the avatar (name or alias as a whole word), as the floor would. */
export function namesAvatar(avatar: AvatarDefinition, text: string): boolean {
  return [avatar.name, ...(avatar.aliases ?? [])].some((label) =>
    new RegExp(
      `(?<![\\p{L}\\p{N}_])${label.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')}(?![\\p{L}\\p{N}_])`,
      'iu',
    ).test(text),
  );
}
