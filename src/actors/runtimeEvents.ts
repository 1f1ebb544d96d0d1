import { z } from 'zod';
import { outgoingResponseSchema } from '../ports/outgoingResponse.js';

const id = z.string().trim().min(1).max(200);
/** Epoch ms; when absent the runtime stamps the event with its clock. */
const at = z.number().int().nonnegative().optional();

const authorSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('human'), id, name: z.string().trim().min(1).max(100) }),
  z.object({ kind: z.literal('avatar'), id }),
]);

const channelSchema = z.object({
  /** The transport kind that serves this channel (`discord`, `terminal`, ...). */
  kind: id,
  id,
});

/** A message someone wrote in a channel (a reply when `replyTo` is set). */
export const channelMessageEventSchema = z.object({
  type: z.literal('channel.message'),
  at,
  channel: channelSchema,
  messageId: id,
  author: authorSchema,
  text: z.string().max(20_000),
  /** Avatar ids the platform says were mentioned (Discord `<@id>`). */
  mentions: z.array(id).max(100).optional(),
  /** The message this one answers; `avatarId` when an avatar wrote it. */
  replyTo: z.object({ messageId: id, avatarId: id.optional() }).optional(),
  /** The message came as a voice note: the voice policy answers in voice. */
  voice: z.boolean().optional(),
});

/** Someone summons an avatar into a channel. */
export const summonEventSchema = z.object({
  type: z.literal('avatar.summon'),
  at,
  channel: channelSchema,
  avatarId: id,
  by: z.object({ id, name: z.string().trim().min(1).max(100) }),
  messageId: id.optional(),
});

/** Someone dismisses an avatar from a channel. */
export const dismissEventSchema = z.object({
  type: z.literal('avatar.dismiss'),
  at,
  channel: channelSchema,
  avatarId: id,
});

/** A response an upstream system already prepared: delivered as is (preparation leaves it alone). */
export const sendResponseEventSchema = z.object({
  type: z.literal('response.send'),
  at,
  response: outgoingResponseSchema,
});

/**
 * Every event the runtime accepts from outside. Routing outcomes are events too, but the runtime
 * makes those itself and publishes them on `outcomes$`.
 */
export const runtimeEventSchema = z.discriminatedUnion('type', [
  channelMessageEventSchema,
  summonEventSchema,
  dismissEventSchema,
  sendResponseEventSchema,
]);

/** See {@link runtimeEventSchema}. */
export type RuntimeEvent = z.infer<typeof runtimeEventSchema>;
/** What callers may pass: `at` and defaults may be left out. */
export type RuntimeEventInput = z.input<typeof runtimeEventSchema>;
/** See {@link channelMessageEventSchema}. */
export type ChannelMessageEvent = z.infer<typeof channelMessageEventSchema>;
/** A channel reference in an event. */
export type EventChannel = z.infer<typeof channelSchema>;
