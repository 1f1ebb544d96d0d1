/**
 * The rules every avatar name, alias and emoji follows, wherever avatars come from (an avatars
 * file, a scenario, `createRuntime({ avatars })`): they are printed in transcripts and terminals
 * and matched in messages, so they hold no control characters or direction overrides (which could
 * forge transcript lines or colours), show at least one visible character, and no two avatars
 * share a name, alias or emoji ignoring case (a mention would be ambiguous).
 */
import { z } from 'zod';

// C0/C1 controls and DEL, line and paragraph separators, and the bidirectional controls.
const controls = /[\p{Cc}\u2028\u2029\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
// Other invisible format characters (zero-width space, word joiner, BOM…); joiners that scripts
// and emoji need (ZWNJ, ZWJ) stay allowed.
const invisibleFormat = /(?![\u200C\u200D])\p{Cf}/u;
// A character a reader can see: not a separator, control, format character, combining mark or
// one of the blank letters (Hangul fillers, braille blank).
const visible = /[^\p{Z}\p{Cc}\p{Cf}\p{M}\s\u115F\u1160\u3164\uFFA0\u2800]/u;

const codePoint = (ch: string) => `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/** What is wrong with a display name or alias, or undefined when it is fine. */
export function nameProblem(text: string): string | undefined {
  const control = controls.exec(text);
  if (control)
    return `has a control character (${codePoint(control[0])}); names are printed in transcripts and terminals`;
  const format = invisibleFormat.exec(text);
  if (format)
    return `has an invisible character (${codePoint(format[0])}) that would make two names look alike`;
  if (!visible.test(text)) return 'has no visible character';
  return undefined;
}

/** An avatar's name or alias: trimmed, 1 to 80 characters, visible, no control characters. */
export const avatarNameSchema = z
  .string()
  .trim()
  .min(1)
  .max(80)
  .superRefine((text, ctx) => {
    const problem = nameProblem(text);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

// In an emoji, tag characters are allowed besides the joiners: subdivision flags are made of them.
const invisibleInEmoji = /(?!\u200C|\u200D|[\u{E0020}-\u{E007F}])\p{Cf}/u;

/** What is wrong with an avatar's emoji, or undefined when it is fine. */
export function emojiProblem(text: string): string | undefined {
  const control = controls.exec(text);
  if (control) return `has a control character (${codePoint(control[0])})`;
  const format = invisibleInEmoji.exec(text);
  if (format) return `has an invisible character (${codePoint(format[0])})`;
  if (!visible.test(text)) return 'has no visible character';
  return undefined;
}

/**
 * An avatar's emoji: it is printed beside the name and addresses the avatar in messages, so it
 * shows something and holds no control characters or direction overrides (joiners, selectors and
 * tag sequences are what emoji are made of, and are fine).
 */
export const avatarEmojiSchema = z
  .string()
  .trim()
  .min(1)
  .max(16)
  .superRefine((text, ctx) => {
    const problem = emojiProblem(text);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

// Text and emoji presentation selectors: "🌙" and "🌙\uFE0F" look the same to a reader.
const presentationSelectors = /[\uFE0E\uFE0F]/gu;

// Characters that show nothing (grapheme joiners, variation selectors, Hangul fillers…): "Rex" with
// one appended looks like "Rex". Emoji joiners and tag characters are kept: they make different emoji.
const showNothing = /(?![\u200D\u{E0020}-\u{E007F}])\p{Default_Ignorable_Code_Point}/gu;

/**
 * Greek and Cyrillic letters drawn like a Latin letter in the same case (Cyrillic "е" is Latin
 * "e", Greek "Ν" is "N"): "Wrеn" spelt with a Cyrillic "е" looks like "Wren". Letters that only
 * resemble a small capital (Cyrillic "в", "н") are left out: in running text they look different.
 */
const latinLookAlikes = new Map<string, string>([
  ...pairs('АВЕЅІЈКМНОРСТХУҮԚԜЁЇ', 'ABESIJKMHOPCTXYYQWËÏ'), // Cyrillic capitals
  ...pairs('аеіјорсхуүѕԁԛԝһӏёї', 'aeijopcxyysdqwhlëï'), // Cyrillic small letters
  ...pairs('ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ', 'ABEZHIKMNOPTYX'), // Greek capitals
  ...pairs('αιονρυγ', 'aiovpuy'), // Greek small letters
]);

/** Each character of `from` with the one at its place in `to`. */
function pairs(from: string, to: string): [string, string][] {
  const a = [...from];
  const b = [...to];
  if (a.length !== b.length) throw new Error(`look-alike table: ${a.length} letters for ${b.length}`);
  return a.map((ch, i) => [ch, b[i] as string]);
}
const greekOrCyrillic = /[\u0370-\u03FF\u0400-\u052F]/gu;

/**
 * How names are compared for ambiguity: compatibility-normalised, Greek and Cyrillic letters that
 * look Latin read as Latin, any case, selectors and other characters that show nothing ignored.
 */
export function nameKey(text: string): string {
  return shownKey(text)
    .replace(greekOrCyrillic, (ch) => latinLookAlikes.get(ch) ?? ch)
    .toLocaleLowerCase('en');
}

/** A name as {@link nameKey} compares it, before look-alike letters are read as Latin. */
function shownKey(text: string): string {
  return text.normalize('NFKC').replace(presentationSelectors, '').replace(showNothing, '');
}

/** Why a name with another avatar's key is refused: the same name, or letters that look alike. */
function ambiguity(text: string, owner: { id: string; text: string; emoji: boolean }): string {
  const what = owner.emoji ? 'the emoji' : 'a name';
  const lower = (t: string) => shownKey(t).toLocaleLowerCase('en');
  const theirs = `${what} of avatar "${owner.id}" (${JSON.stringify(owner.text)})`;
  return lower(text) === lower(owner.text)
    ? `${JSON.stringify(text)} is also ${theirs}; mentions would be ambiguous`
    : `${JSON.stringify(text)} looks like ${theirs}: its Greek or Cyrillic letters look like Latin ones, so readers could not tell the two apart`;
}

/** One name shared by two avatars: where the later one is, and why it is refused. */
export interface AmbiguousName {
  /** Index of the avatar in the list. */
  index: number;
  /** `['name']`, `['aliases', j]` or `['emoji']`. */
  field: (string | number)[];
  message: string;
}

/**
 * Names, aliases and emojis that another avatar already answers to, ignoring case: a message
 * naming it could mean either (the floor finds an emoji in a message as it finds a name). An
 * avatar repeating its own name as an alias is harmless and allowed.
 */
export function ambiguousNames(
  avatars: readonly {
    id: string;
    name: string;
    aliases?: readonly string[] | undefined;
    emoji?: string | undefined;
  }[],
): AmbiguousName[] {
  const owners = new Map<string, { index: number; id: string; text: string; emoji: boolean }>();
  const problems: AmbiguousName[] = [];
  avatars.forEach((avatar, index) => {
    const names: [string, (string | number)[]][] = [
      [avatar.name, ['name']],
      ...(avatar.aliases ?? []).map((alias, j): [string, (string | number)[]] => [alias, ['aliases', j]]),
      ...(avatar.emoji !== undefined ? [[avatar.emoji, ['emoji']] as [string, (string | number)[]]] : []),
    ];
    for (const [text, field] of names) {
      const key = nameKey(text);
      if (key.trim() === '') continue;
      const owner = owners.get(key);
      if (owner && owner.index !== index) {
        problems.push({ index, field, message: ambiguity(text, owner) });
        continue;
      }
      if (!owner) owners.set(key, { index, id: avatar.id, text, emoji: field[0] === 'emoji' });
    }
  });
  return problems;
}
