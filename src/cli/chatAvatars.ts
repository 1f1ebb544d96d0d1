import type { AvatarDefinition } from '../actors/avatarDefinition.js';
import { terminalText } from '../delivery/terminalText.js';

/** How the chat names an avatar: its emoji (if any) and its name. */
export function avatarLabel(avatar: AvatarDefinition): string {
  return avatar.emoji ? `${avatar.emoji} ${avatar.name}` : avatar.name;
}

/**
 * The avatar a person means by `raw` (`@` optional, any case): the one whose id, name or alias it
 * is, else the only one with a label starting with it.
 */
export function findAvatar(avatars: readonly AvatarDefinition[], raw: string): AvatarDefinition | undefined {
  const query = raw.trim().replace(/^@/u, '').toLocaleLowerCase('en');
  if (query === '') return undefined;
  const labels = (a: AvatarDefinition) =>
    [a.id, a.name, ...(a.aliases ?? [])].map((l) => l.toLocaleLowerCase('en'));
  const exact = avatars.find((a) => labels(a).includes(query));
  if (exact) return exact;
  const prefixed = avatars.filter((a) => labels(a).some((l) => l.startsWith(query)));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/**
 * The avatars whose id, name or alias starts with `raw` when there are several (so it names none of
 * them), else none: summoning such a prefix asks for more of the name instead of creating one.
 */
export function avatarsStartingWith(avatars: readonly AvatarDefinition[], raw: string): AvatarDefinition[] {
  const query = raw.trim().replace(/^@/u, '').toLocaleLowerCase('en');
  if (query === '') return [];
  const matching = avatars.filter((a) =>
    [a.id, a.name, ...(a.aliases ?? [])].some((l) => l.toLocaleLowerCase('en').startsWith(query)),
  );
  return matching.length > 1 ? matching : [];
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
