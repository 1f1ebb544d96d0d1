import { clipText } from '../../delivery/clipText.js';
import type { ModelPersona, TurnBrief } from '../../ports/model.js';

/** What the offline scripted "model" needs to write one turn. */
export interface ScriptedReplyInput {
  turn: TurnBrief;
  avatar: ModelPersona;
  /** Whether an id belongs to an avatar (replies to avatars mention them back, to keep talking). */
  isAvatar: (id: string) => boolean;
  /** Longest greeting allowed (`config.greetingMaxChars`). */
  greetingMaxChars: number;
  /** Turns this avatar already delivered in the turn's thread. */
  spokenInThread: number;
  /** Names and aliases of every avatar: never echoed back by accident, since names are mentions. */
  avatarNames?: readonly string[];
}

/** One offline reply: the text and the avatar ids it mentions the platform way. */
export interface ScriptedReply {
  text: string;
  mentions: string[];
  /** True when the reply takes leave, so its thread can end naturally. */
  farewell: boolean;
}

/** 32-bit FNV-1a: a stable seed from a string. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** mulberry32: a tiny seeded generator, so replies are varied yet replay identically. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

function capitalise(text: string): string {
  return text.charAt(0).toLocaleUpperCase('en') + text.slice(1);
}

/** Cuts text to `max` characters at a word boundary, with an ellipsis. */
export const clip = clipText;

/** Short personas already made, by persona (a cast has few; the map is emptied past 256). */
const shortPersonas = new Map<string | undefined, string>();

/** "a dreamy astronomer" from "a dreamy astronomer, always looking up." */
function personaShort(avatar: ModelPersona): string {
  let short = shortPersonas.get(avatar.persona);
  if (short === undefined) {
    short = shortPersonaOf(avatar.persona);
    if (shortPersonas.size >= 256) shortPersonas.clear();
    shortPersonas.set(avatar.persona, short);
  }
  return short;
}

function shortPersonaOf(persona: string | undefined): string {
  // A full stop ends the clause only before a capital or the end ("a retired T. rex" stays whole).
  const first = persona?.split(/[,;!?—(]|\.(?=\s+\p{Lu}|\s*$)/u)[0]?.trim();
  if (!first) return 'a friendly avatar';
  // Keep the noun phrase: "a dreamy astronomer who names comets" -> "a dreamy astronomer".
  const core = first.split(/\s+(?:who|that|which|with|whose)\s+/u)[0] ?? first;
  return clip(core.charAt(0).toLocaleLowerCase('en') + core.slice(1), 48);
}

function listNames(names: readonly string[]): string {
  // Name at most three: every name is a mention, and mentions claim turns.
  const shown = names.slice(0, 3);
  const rest = names.length - shown.length;
  if (rest > 0) return `${shown.join(', ')} and ${rest} more`;
  if (shown.length <= 1) return shown.join('');
  return `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1]}`;
}

const COMMON_WORDS = new Set(
  'about after again always anyone asking because before being could doing everyone everything going great honestly little maybe might never other people really right should something still thanks there these thing things think those though would yours'.split(
    ' ',
  ),
);

const NO_NAMES: readonly string[] = [];

/** The cast's names in lower case, per list (the cast hands out the same list until it changes). */
const lowerCastNames = new WeakMap<readonly string[], ReadonlySet<string>>();

function lowerNamesOf(names: readonly string[]): ReadonlySet<string> {
  let lower = lowerCastNames.get(names);
  if (!lower) {
    lower = new Set(names.map((n) => n.toLocaleLowerCase('en')));
    lowerCastNames.set(names, lower);
  }
  return lower;
}

/**
 * A word from the message being answered, to echo back, if one stands out: never a name of
 * `avoid` (the turn's) or `castNames`, nor a common or template word.
 */
function echoWord(
  random: () => number,
  text: string | undefined,
  avoid: readonly string[],
  castNames: readonly string[],
): string | undefined {
  const found = text?.match(/\p{L}{5,}/gu);
  if (!found) return undefined;
  const cast = lowerNamesOf(castNames);
  const words: string[] = [];
  for (const match of found) {
    const w = match.toLocaleLowerCase('en');
    if (COMMON_WORDS.has(w) || templateWords().has(w) || cast.has(w)) continue;
    if (avoid.some((name) => name.toLocaleLowerCase('en') === w)) continue;
    words.push(w);
  }
  return words.length > 0 ? pick(random, words) : undefined;
}

const HELLOS = ['Hello, everyone', 'Hi all', 'Greetings', 'Hey there', 'Well, hello'];
const TAGLINES = [
  'Your {bare} has arrived. Who wants to talk {topic}?',
  'Just {persona} dropping by. Anyone into {topic}?',
  'Reporting for duty: {persona}, fluent in {topic} and {topic2}.',
  'Summoned at last! Quick, someone ask me about {topic}.',
];
/** A summoned avatar's second follow-up, to someone who reacted to it. */
const SECOND_FOLLOW_UPS = [
  'thanks for the welcome! Ask me anything about {topic}.',
  'glad you said hello. Shall we talk {topic}?',
  'good to be here. {Topic} later, maybe?',
];
/** An avatar summoned while already present answers the call instead of arriving. */
const CALLED = [
  '{by}, you called? I never left. What about {topic}?',
  'Right here, {by}! Still happy to talk {topic}.',
  '{by}, present and listening. {Topic}, anyone?',
];
const ARRIVALS = [
  'What are we talking about?',
  'I was hoping to chat about {topic}.',
  'Fancy meeting you here. {Topic}, anyone?',
  'Mind if I pull up a chair?',
];
/**
 * A follow-up with no other avatar present. People may be here (the offline model does not read
 * the transcript), so it neither greets anyone nor says the room is empty.
 */
const SETTLING_IN = [
  'Settling in. Anyone for {topic}?',
  'So, who wants to talk {topic}?',
  'I could talk {topic} all day, if anyone is up for it.',
];
const REACTIONS = [
  'good point!',
  'ha, I love that.',
  'hmm, I see it differently.',
  "that's wild!",
  'tell me more!',
  'oh, absolutely.',
  "now you're talking.",
];
const MUSINGS = [
  '{Topic}: basically my whole personality.',
  'This reminds me of {topic}.',
  'As {persona}, I have opinions about {topic}.',
  'Have you ever really thought about {topic}?',
  'Honestly, it all comes back to {topic}.',
  'I could talk about {topic} all day.',
  'Not to brag, but I know a lot about {topic}.',
  'Between us, {topic} is underrated.',
  'My hot take: {topic} over {topic2}, any day.',
  'Somebody say {topic}? I heard {topic}.',
];
const FIRST_AND_LAST = [
  'Just popping in to wave. See you around!',
  'Hello and goodbye: {topic} calls!',
  "Can't stay, sorry. Gotta go!",
];
const ANSWERS = [
  'great question!',
  'ooh, let me think.',
  'funny you should ask!',
  'short answer: yes.',
  'honestly? No idea.',
  'you would ask me that.',
];
const FAREWELLS = [
  'Gotta go, see you around!',
  "Well, that's my cue. Goodbye for now!",
  "I'll leave it there. See you later!",
  'Gotta go, duty calls: {topic}. Bye!',
  'Lovely chat. Goodbye, all!',
];

let templateWordSet: Set<string> | undefined;
/** Words of the reply templates: echoing another avatar's stock phrase back ("point?") reads badly. */
function templateWords(): Set<string> {
  templateWordSet ??= new Set(
    [HELLOS, TAGLINES, ARRIVALS, SETTLING_IN, REACTIONS, ANSWERS, MUSINGS, FIRST_AND_LAST, FAREWELLS]
      .flat()
      .flatMap((line) => line.toLocaleLowerCase('en').match(/\p{L}+/gu) ?? []),
  );
  return templateWordSet;
}

/**
 * Writes one turn for the offline simulator: deterministic (seeded by avatar id and turn id, never
 * `Math.random`), flavoured by the avatar's persona and topics, and short.
 *
 * - greeting: at most `greetingMaxChars`;
 * - follow-up: names the avatars present ("Oh, Luna and Rex are here!"), or with none, invites
 *   talk without claiming the room is empty (people may be there: the transcript is not read);
 * - response: addresses whoever spoke, mentioning them back when they are an avatar so the
 *   conversation continues, and takes leave (naming nobody) once its thread is near its limit,
 *   the floor marks the turn `closing`, or the avatar has already spoken twice in the thread, so
 *   threads end naturally.
 *
 * The text never contains the avatar's own name or emoji, so it never addresses itself.
 */
export function scriptedReply(input: ScriptedReplyInput): ScriptedReply {
  const { turn, avatar } = input;
  const random = seeded(fnv1a(`${avatar.id}:${turn.turnId}`));
  const topics = avatar.topics?.length ? avatar.topics : ['small talk', 'the weather'];
  const topic = pick(random, topics);
  const topic2 = topics.find((t) => t !== topic) ?? 'everything else';
  // Each part is made only when the template has its placeholder.
  const fill = (template: string) => {
    let text = template;
    if (text.includes('{persona}')) text = text.replaceAll('{persona}', personaShort(avatar));
    if (text.includes('{bare}'))
      text = text.replaceAll('{bare}', personaShort(avatar).replace(/^(?:an?|the)\s+/iu, ''));
    if (text.includes('{Topic}')) text = text.replaceAll('{Topic}', capitalise(topic));
    return text.replaceAll('{topic2}', topic2).replaceAll('{topic}', topic);
  };

  if (turn.kind === 'greeting' && turn.context.alreadyPresent) {
    const text = fill(pick(random, CALLED)).replaceAll('{by}', turn.context.addressedByName ?? 'Hi');
    return { text: clip(text, input.greetingMaxChars), mentions: [], farewell: false };
  }
  if (turn.kind === 'greeting') {
    const text = `${pick(random, HELLOS)}! ${fill(pick(random, TAGLINES))}`;
    return { text: clip(text, input.greetingMaxChars), mentions: [], farewell: false };
  }

  if (turn.kind === 'follow-up' && turn.context.addressedByName !== undefined) {
    // The second follow-up answers whoever reacted to the avatar since it arrived.
    const text = `${turn.context.addressedByName}, ${fill(pick(random, SECOND_FOLLOW_UPS))}`;
    return { text, mentions: [], farewell: false };
  }
  if (turn.kind === 'follow-up') {
    const present = turn.context.presentNames.filter((name) => name !== avatar.name);
    const text =
      present.length > 0
        ? `Oh, ${listNames(present)} ${present.length === 1 ? 'is' : 'are'} here! ${fill(pick(random, ARRIVALS))}`
        : fill(pick(random, SETTLING_IN));
    return { text, mentions: [], farewell: false };
  }

  const { threadTurn, threadMaxTurns, addressedById, addressedByName } = turn.context;
  const nearLimit =
    threadTurn !== undefined && threadMaxTurns !== undefined && threadTurn >= threadMaxTurns - 1;
  const closing = turn.context.closing === true;
  if (turn.threadId !== undefined && (nearLimit || closing || input.spokenInThread >= 2)) {
    // A farewell names nobody: a thread whose last turn addresses no one can conclude.
    const lines = input.spokenInThread === 0 ? FIRST_AND_LAST : FAREWELLS;
    return { text: fill(pick(random, lines)), mentions: [], farewell: true };
  }

  const word = echoWord(
    random,
    turn.context.triggerText,
    [avatar.name, ...(addressedByName ? [addressedByName] : []), ...turn.context.presentNames],
    input.avatarNames ?? NO_NAMES,
  );
  const asked = /\?\s*$/u.test(turn.context.triggerText ?? '');
  const reaction = pick(random, asked ? ANSWERS : REACTIONS);
  const musing = fill(pick(random, MUSINGS));
  const body =
    word && random() < 0.5 ? `${word}? ${capitalise(reaction)} ${musing}` : `${reaction} ${musing}`;
  const byAvatar =
    addressedById !== undefined && input.isAvatar(addressedById) && addressedById !== avatar.id;
  if (byAvatar && addressedByName && !closing) {
    return { text: `${addressedByName}, ${body}`, mentions: [addressedById], farewell: false };
  }
  // A closing turn cannot be answered (no budget left), and an avatar's name is a mention: say it
  // to nobody. People are addressed by name: that claims no avatar turn.
  const text = addressedByName && !byAvatar ? `${addressedByName}, ${body}` : capitalise(body);
  return { text, mentions: [], farewell: false };
}
