/**
 * How a person names an avatar in a command (`/summon nova`, `@Stargazer`, `rex`): by its id, name
 * or an alias, in any case and Unicode form, or by the start of one when only one avatar has it.
 * The chat and Discord's commands read names this one way.
 */

/** What a query looks at: an avatar's id, name and aliases. */
export interface NamedAvatar {
  id: string;
  name: string;
  aliases?: readonly string[] | undefined;
}

const fold = (text: string) => text.normalize('NFKC').toLocaleLowerCase('en');

/** `raw` as it is compared: without surrounding space and a leading `@`, folded. */
function queryOf(raw: string): string {
  return fold(raw.trim().replace(/^@/u, ''));
}

function labels(avatar: NamedAvatar): string[] {
  return [avatar.id, avatar.name, ...(avatar.aliases ?? [])].map(fold);
}

/** The avatar `raw` names: the one whose id, name or alias it is, else the only one with a label starting with it. */
export function findAvatarByQuery<T extends NamedAvatar>(avatars: readonly T[], raw: string): T | undefined {
  const query = queryOf(raw);
  if (query === '') return undefined;
  const exact = avatars.find((a) => labels(a).includes(query));
  if (exact) return exact;
  const prefixed = avatarsStartingWith(avatars, raw, 1);
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/**
 * The avatars with a label starting with `raw`, when there are at least `atLeast` of them (default
 * 2: a start that several share names none of them), else none.
 */
export function avatarsStartingWith<T extends NamedAvatar>(
  avatars: readonly T[],
  raw: string,
  atLeast = 2,
): T[] {
  const query = queryOf(raw);
  if (query === '') return [];
  const matching = avatars.filter((a) => labels(a).some((l) => l.startsWith(query)));
  return matching.length >= atLeast ? matching : [];
}
