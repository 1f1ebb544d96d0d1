import { createHash } from 'node:crypto';
import { z } from 'zod';
import { clipText } from '../delivery/clipText.js';
import type { ObjectModel } from '../ports/objectModel.js';
import { TroupeError } from '../ports/troupeError.js';
import { emojiProblem, nameKey, nameProblem } from './avatarNames.js';

/** The longest persona a created avatar gets (a model's longer one is clipped at a word). */
export const CREATED_PERSONA_MAX = 400;
/** The most topics a created avatar gets, and the longest each may be. */
const TOPICS_MAX = 5;
const TOPIC_CHARS = 60;

/** What a new avatar is made of: its name, an emoji, a persona, and who wrote them. */
export interface AvatarSketch {
  name: string;
  emoji?: string | undefined;
  persona: string;
  /** What it cares about (the ladder's topic rungs pick avatars by them); none from the template. */
  topics?: string[] | undefined;
  madeBy: 'model' | 'template';
}

/** What the model is asked for (structured output). Lengths are checked after, not refused. */
export const avatarSketchSchema = z.object({
  name: z.string().describe('The name as the person wrote it; only its capitalisation may change.'),
  emoji: z.string().describe('One emoji that fits the character.'),
  persona: z
    .string()
    .describe(
      `Who the character is, in the third person, opening with a noun phrase ("A retired wizard who …"); at most ${CREATED_PERSONA_MAX} characters.`,
    ),
  topics: z
    .array(z.string())
    .describe(`${TOPICS_MAX} or fewer short topics the character cares about, one to three words each.`),
});

/** Who asked for the avatar, and who is already there: what the model writes the persona from. */
export interface SketchRequest {
  name: string;
  byName: string;
  /** Names of the avatars the runtime already has (the new one should not copy them). */
  others: readonly string[];
  signal?: AbortSignal;
}

// Control and direction characters would reach prompts and terminals; a persona is one paragraph.
const unprintable = /[\p{Cc}\p{Cf}\u2028\u2029]+/gu;

/**
 * The avatar's id: a readable slug of its name and a hash of the name as names are compared, so
 * two processes creating the same name at once choose the same id (and the store lets one win).
 */
export function createdAvatarId(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/gu, '-')
    .replace(/^-+|-+$/gu, '')
    .slice(0, 40)
    .replace(/-+$/u, '');
  const hash = createHash('sha256').update(nameKey(name)).digest('hex').slice(0, 6);
  return `${slug || 'avatar'}-${hash}`;
}

/** Text from outside for a persona: one line, no control or direction characters, at most `max`. */
export function oneLine(text: string, max: number): string {
  return clipText(text.replace(unprintable, ' ').replace(/\s+/gu, ' ').trim(), max);
}

/** The offline sketch: a persona that says it is a template, and no emoji. */
export function templateSketch(request: SketchRequest): AvatarSketch {
  const persona = clipText(
    `A newcomer called ${request.name}, summoned into this chat by ${oneLine(request.byName, 60)}, whose character ` +
      'nobody has written yet (this persona is a template: no language model wrote it). Curious, ' +
      'friendly and brief; asks people what they would like from it.',
    CREATED_PERSONA_MAX,
  );
  return { name: request.name, persona, madeBy: 'template' };
}

/**
 * The model's sketch, made safe: the persona flattened to one paragraph without control characters
 * and clipped to {@link CREATED_PERSONA_MAX}; the name kept as asked unless the model only fixed its
 * capitalisation; an emoji that is not one dropped.
 *
 * @throws TroupeError `TROUPE_MODEL_*` when the call fails, and
 *   (`TROUPE_MODEL_FAILED` too) when the persona is blank.
 */
export async function modelSketch(model: ObjectModel, request: SketchRequest): Promise<AvatarSketch> {
  const answer = await model.generateObject({
    schema: avatarSketchSchema,
    schemaName: 'avatar_sketch',
    prompt: sketchPrompt(request),
    ...(request.signal ? { signal: request.signal } : {}),
  });
  const persona = oneLine(answer.persona, CREATED_PERSONA_MAX);
  if (persona === '') throw new TroupeError('TROUPE_MODEL_FAILED', `${model.id} wrote an empty persona`);
  const suggested = answer.name.trim();
  // Only its capitalisation: another form (fullwidth letters…) would not be matched in messages.
  const sameLetters = suggested.toLocaleLowerCase('en') === request.name.toLocaleLowerCase('en');
  const name = sameLetters && !nameProblem(suggested) ? suggested : request.name;
  const emoji = answer.emoji.trim();
  // A pictograph or a flag: punctuation such as "." would address the avatar in every sentence.
  const pictured = /\p{Extended_Pictographic}|\p{Regional_Indicator}/u.test(emoji);
  const usable = emoji.length <= 16 && pictured && !emojiProblem(emoji) && !/[\p{L}\p{N}]/u.test(emoji);
  const topics = cleanTopics(answer.topics);
  return {
    name,
    ...(usable ? { emoji } : {}),
    persona,
    ...(topics.length > 0 ? { topics } : {}),
    madeBy: 'model',
  };
}

/** The model's topics as one line each, without control characters, repeats or blanks; at most five. */
function cleanTopics(raw: readonly string[]): string[] {
  const seen = new Set<string>();
  const topics: string[] = [];
  for (const topic of raw) {
    const text = oneLine(topic, TOPIC_CHARS);
    const key = text.toLocaleLowerCase('en');
    if (text === '' || seen.has(key)) continue;
    seen.add(key);
    topics.push(text);
    if (topics.length === TOPICS_MAX) break;
  }
  return topics;
}

function sketchPrompt(request: SketchRequest) {
  const others = request.others.length > 0 ? request.others.join(', ') : 'none';
  return {
    system: [
      'You create characters for a group chat where several AI characters talk with people.',
      `Someone summoned a character by name; write who that character is. The persona describes the character in the third person and opens with a noun phrase ("A retired wizard who …"): personality, way of speaking, interests. At most ${CREATED_PERSONA_MAX} characters, one paragraph.`,
      'If the name belongs to a well-known fictional or historical figure, play to it; otherwise invent one that fits the name.',
      'Keep the name as written (you may only fix its capitalisation). Choose one emoji that fits, and up to five topics the character would talk about.',
      'Do not copy the characters who are already there.',
    ].join('\n'),
    messages: [
      {
        role: 'user' as const,
        content: `Name: ${request.name}\nSummoned by: ${oneLine(request.byName, 60)}\nCharacters already there: ${others}`,
      },
    ],
  };
}
