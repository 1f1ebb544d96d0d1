import { type RuntimeEvent, runtimeEventSchema } from './runtimeEvents.js';

/** What {@link parseRuntimeEvent} says: zod's `safeParse` result. */
export type ParsedRuntimeEvent = ReturnType<typeof runtimeEventSchema.safeParse>;

/**
 * Validates an inbound event as {@link runtimeEventSchema} does, with the same result. Messages,
 * summons and dismissals — nearly every event — are checked and copied by hand (zod's parse costs
 * more than the rest of a message's way to the floor); `response.send`, and anything the quick
 * check is not sure of (an invalid event included), goes through zod, which also words the errors.
 */
export function parseRuntimeEvent(input: unknown): ParsedRuntimeEvent {
  const quick = quickEvent(input);
  return quick ? ({ success: true, data: quick } as ParsedRuntimeEvent) : runtimeEventSchema.safeParse(input);
}

type ChannelMessage = Extract<RuntimeEvent, { type: 'channel.message' }>;
type Summon = Extract<RuntimeEvent, { type: 'avatar.summon' }>;
type Dismiss = Extract<RuntimeEvent, { type: 'avatar.dismiss' }>;

function quickEvent(input: unknown): RuntimeEvent | undefined {
  if (!isObject(input)) return undefined;
  switch (input.type) {
    case 'channel.message':
      return quickChannelMessage(input);
    case 'avatar.summon':
      return quickSummon(input);
    case 'avatar.dismiss':
      return quickDismiss(input);
    default:
      return undefined;
  }
}

/** `at` as the schema has it: absent, or a safe non-negative integer. */
function validAt(at: unknown): boolean {
  return at === undefined || (Number.isSafeInteger(at) && (at as number) >= 0);
}

/** A channel as the schema has it, copied, or undefined. */
function channelOf(channel: unknown): { kind: string; id: string } | undefined {
  if (!isObject(channel)) return undefined;
  const kind = id(channel.kind);
  const channelId = id(channel.id);
  return kind === undefined || channelId === undefined ? undefined : { kind, id: channelId };
}

/** A person's name as the schema has it: trimmed, 1-100 characters. */
function name(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed.length >= 1 && trimmed.length <= 100 ? trimmed : undefined;
}

function quickSummon(input: Record<string, unknown>): Summon | undefined {
  const { at, by } = input;
  if (!validAt(at) || !isObject(by)) return undefined;
  const channel = channelOf(input.channel);
  const avatarId = id(input.avatarId);
  const byId = id(by.id);
  const byName = name(by.name);
  if (!channel || avatarId === undefined || byId === undefined || byName === undefined) return undefined;
  const event = { type: 'avatar.summon' } as Summon;
  if ('at' in input) event.at = at as number | undefined;
  event.channel = channel;
  event.avatarId = avatarId;
  event.by = { id: byId, name: byName };
  if ('messageId' in input) {
    if (input.messageId === undefined) event.messageId = undefined;
    else {
      const messageId = id(input.messageId);
      if (messageId === undefined) return undefined;
      event.messageId = messageId;
    }
  }
  return event;
}

function quickDismiss(input: Record<string, unknown>): Dismiss | undefined {
  const { at } = input;
  if (!validAt(at)) return undefined;
  const channel = channelOf(input.channel);
  const avatarId = id(input.avatarId);
  if (!channel || avatarId === undefined) return undefined;
  const event = { type: 'avatar.dismiss' } as Dismiss;
  if ('at' in input) event.at = at as number | undefined;
  event.channel = channel;
  event.avatarId = avatarId;
  return event;
}

/** An id as the schema has it: trimmed, 1-200 characters. */
function id(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed.length >= 1 && trimmed.length <= 200 ? trimmed : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The event as zod would output it (known keys only, ids trimmed, nested objects copied), or
 * undefined when it is not a valid `channel.message` or is one the quick check leaves to zod.
 */
function quickChannelMessage(input: Record<string, unknown>): ChannelMessage | undefined {
  const { at, author, text, mentions, replyTo, voice } = input;
  if (!validAt(at) || !isObject(author)) return undefined;
  if (typeof text !== 'string' || text.length > 20_000) return undefined;
  if (voice !== undefined && typeof voice !== 'boolean') return undefined;
  const channel = channelOf(input.channel);
  const messageId = id(input.messageId);
  const authorId = id(author.id);
  if (!channel || messageId === undefined || authorId === undefined) return undefined;
  let parsedAuthor: ChannelMessage['author'];
  if (author.kind === 'human') {
    const authorName = name(author.name);
    if (authorName === undefined) return undefined;
    parsedAuthor = { kind: 'human', id: authorId, name: authorName };
  } else if (author.kind === 'avatar') {
    parsedAuthor = { kind: 'avatar', id: authorId };
  } else {
    return undefined;
  }
  // Built in the schema's key order; an optional key given as undefined stays, as zod keeps it.
  const event = { type: 'channel.message' } as ChannelMessage;
  if ('at' in input) event.at = at as number | undefined;
  event.channel = channel;
  event.messageId = messageId;
  event.author = parsedAuthor;
  event.text = text;
  if ('mentions' in input) {
    if (mentions === undefined) event.mentions = undefined;
    else {
      if (!Array.isArray(mentions) || mentions.length > 100) return undefined;
      const ids: string[] = [];
      for (const m of mentions) {
        const mention = id(m);
        if (mention === undefined) return undefined;
        ids.push(mention);
      }
      event.mentions = ids;
    }
  }
  if ('replyTo' in input) {
    if (replyTo === undefined) event.replyTo = undefined;
    else {
      if (!isObject(replyTo)) return undefined;
      const replyId = id(replyTo.messageId);
      if (replyId === undefined) return undefined;
      const parsedReply: NonNullable<ChannelMessage['replyTo']> = { messageId: replyId };
      if ('avatarId' in replyTo) {
        if (replyTo.avatarId === undefined) parsedReply.avatarId = undefined;
        else {
          const avatarId = id(replyTo.avatarId);
          if (avatarId === undefined) return undefined;
          parsedReply.avatarId = avatarId;
        }
      }
      event.replyTo = parsedReply;
    }
  }
  if ('voice' in input) event.voice = voice as boolean | undefined;
  return event;
}
