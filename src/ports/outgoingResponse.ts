import { z } from 'zod';

/** An attachment sent with a response: bytes (base64, so it survives the outbox) or a URL. */
export const attachmentSchema = z
  .object({
    name: z.string().min(1),
    mediaType: z.string().min(1),
    /** Base64-encoded content. */
    dataBase64: z.string().optional(),
    url: z.string().url().optional(),
  })
  .refine((a) => a.dataBase64 !== undefined || a.url !== undefined, {
    message: 'an attachment needs dataBase64 or url',
  });

/** Who speaks: an avatar's name and picture, so one bot account can voice many characters. */
export const speakerSchema = z.object({
  avatarId: z.string().min(1),
  name: z.string().min(1),
  emoji: z.string().optional(),
  pictureUrl: z.string().url().optional(),
});

/** Where a response goes: the transport is chosen by `kind`, the conversation by `id`. */
export const channelRefSchema = z.object({ kind: z.string().min(1), id: z.string().min(1) });

/**
 * What a response is, for correlation and logs only; the routing actor passes it through to its
 * outcome and never acts on it. `answer` is a generated reply, `error` a user-facing error message,
 * `fallback` the feedback guarantee's safe reply, `notice` anything else the runtime says.
 */
export const responseOriginSchema = z.object({
  kind: z.enum(['answer', 'error', 'fallback', 'notice']),
  turnId: z.string().optional(),
  avatarId: z.string().optional(),
  /** The inbound message this answers, if any. */
  triggerMessageId: z.string().optional(),
});

/**
 * The one contract transport consumes: everything a user will see or hear, made by
 * the preparation actor, sent by the routing actor. Plain JSON, so the outbox can persist it.
 */
export const outgoingResponseSchema = z.object({
  /** Unique per response; the outbox and transports use it so nothing is sent twice. */
  idempotencyKey: z.string().min(1),
  channel: channelRefSchema,
  speaker: speakerSchema.optional(),
  text: z.string().optional(),
  /** Speak `text` (voice text may differ from the written text, e.g. without markup). */
  voice: z.object({ text: z.string().min(1), voiceId: z.string().optional() }).optional(),
  attachments: z.array(attachmentSchema).default([]),
  replyTo: z.object({ messageId: z.string().min(1) }).optional(),
  origin: responseOriginSchema,
  /** When the response was prepared (epoch ms). */
  preparedAt: z.number(),
});

/** See {@link outgoingResponseSchema}. */
export type OutgoingResponse = z.infer<typeof outgoingResponseSchema>;
/** See {@link attachmentSchema}. */
export type Attachment = z.infer<typeof attachmentSchema>;
/** See {@link speakerSchema}. */
export type Speaker = z.infer<typeof speakerSchema>;
/** See {@link channelRefSchema}. */
export type ChannelRef = z.infer<typeof channelRefSchema>;
/** See {@link responseOriginSchema}. */
export type ResponseOrigin = z.infer<typeof responseOriginSchema>;

/** True when a response has something to send: non-blank text, a voice request, or an attachment. */
export function isSendable(response: OutgoingResponse | undefined): response is OutgoingResponse {
  if (!response) return false;
  return (
    (response.text?.trim() ?? '') !== '' || response.voice !== undefined || response.attachments.length > 0
  );
}
