import { z } from 'zod';
import { humanResponseSchema, type InterruptConfig } from './agentInbox.js';

/** The answers an interrupt may take, in the order `troupe inbox answer` names them. */
export const answerTypes = ['accept', 'edit', 'response', 'ignore'] as const;

const ALLOWS = {
  accept: 'allow_accept',
  edit: 'allow_edit',
  response: 'allow_respond',
  ignore: 'allow_ignore',
} as const satisfies Record<(typeof answerTypes)[number], keyof InterruptConfig>;

/** The answers an interrupt's config allows. */
export function allowedAnswers(config: InterruptConfig): (typeof answerTypes)[number][] {
  return answerTypes.filter((type) => config[ALLOWS[type]]);
}

const isoTime = z.iso.datetime();

/** The headers of the email an interrupt is about (its body stays in the mailbox and `description`). */
export const inboxEmailJsonSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    cc: z.string().nullable(),
    subject: z.string(),
    /** When it was sent, as the email gave it (ISO 8601 when known). */
    date: z.string().nullable(),
    /** The RFC 5322 Message-ID header. */
    messageId: z.string().nullable(),
    threadId: z.string().nullable(),
  })
  .strict();

/**
 * One interrupt as `troupe inbox list --json` and `troupe inbox show <id> --json` print it: every
 * field always present (`null` when it does not apply), times in ISO 8601 UTC.
 */
export const inboxItemJsonSchema = z
  .object({
    /** The interrupt's id, `<email id>#<n>`: what `troupe inbox answer` takes. */
    id: z.string(),
    emailId: z.string(),
    status: z.enum(['pending', 'answered']),
    /** The proposed call: a reviewed tool with its arguments, or the notify action with none. */
    call: z.object({ action: z.string(), args: z.record(z.string(), z.unknown()) }).strict(),
    /** The answers it takes. */
    allowed: z.array(z.enum(answerTypes)),
    /** `null` only when the email's record is no longer in the store. */
    email: inboxEmailJsonSchema.nullable(),
    /** The Markdown the person is shown (the email and the proposal; for an answered one, its heading). */
    description: z.string(),
    createdAt: isoTime,
    answeredAt: isoTime.nullable(),
    /** The answer, in the Agent Inbox shape, once given. */
    answer: humanResponseSchema.nullable(),
    /** The preference memory version the answer produced, if it updated one. */
    memory: z
      .object({ namespace: z.string(), version: z.number().int().positive(), summary: z.string() })
      .strict()
      .nullable(),
  })
  .strict();

/** What `troupe inbox list --json` prints: the pending interrupts, oldest first. */
export const inboxListJsonSchema = z.array(inboxItemJsonSchema);

/** See {@link inboxItemJsonSchema}. */
export type InboxItemJson = z.infer<typeof inboxItemJsonSchema>;
