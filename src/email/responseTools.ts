import { z } from 'zod';
import { parseRecipients } from './emailAddress.js';

// Header fields (a reply's recipient and subject, a meeting's subject and attendees) stay on one
// line with no control characters: a line break there would add headers to the message sent
// (`Subject: x\r\nBcc: …`), whoever proposed it (the email's own subject, a model, an edit).
const oneLine = (max: number) =>
  z
    .string()
    .trim()
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    .regex(/^[^\u0000-\u001f\u007f-\u009f\u2028\u2029]*$/u, 'one line, without control characters')
    .max(max);

const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/u, 'a day as YYYY-MM-DD');
const time = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/u, 'a time as HH:MM (24-hour)');
const timeZone = z
  .string()
  .min(1)
  .refine(
    (zone) => {
      try {
        new Intl.DateTimeFormat('en', { timeZone: zone });
        return true;
      } catch {
        return false;
      }
    },
    { message: 'an IANA time zone, e.g. Europe/Berlin' },
  );

/** The response agent's tools and their arguments (what a human edits in a review is checked here). */
export const responseToolSchemas = {
  /** Write and send a reply (reviewed). */
  send_email_tool: z.object({
    // A list of addresses (`Name <addr>, other@x`), parsed as a mail client would.
    to: oneLine(500)
      .min(3)
      .superRefine((to, ctx) => {
        const parsed = parseRecipients(to);
        if (!parsed.ok)
          ctx.addIssue({ code: 'custom', message: `not a list of email addresses: ${parsed.problem}` });
      }),
    subject: oneLine(500).min(1),
    content: z.string().trim().min(1).max(20_000),
  }),
  /** Send a calendar invitation (reviewed). */
  schedule_meeting_tool: z.object({
    attendees: z.array(oneLine(320).min(3)).min(1).max(50),
    subject: oneLine(500).min(1),
    duration_minutes: z.number().int().min(5).max(480),
    preferred_day: day,
    start_time: time,
    time_zone: timeZone,
  }),
  /** Look up free time on a day (not reviewed: it changes nothing). */
  check_calendar_availability_tool: z.object({ day, time_zone: timeZone }),
  /** Ask the user something the agent cannot decide (reviewed: answered or ignored). */
  Question: z.object({ content: z.string().trim().min(1).max(5_000) }),
  /** The email needs nothing more. */
  Done: z.object({ done: z.literal(true) }),
} as const;

/** A tool's name. */
export type ResponseToolName = keyof typeof responseToolSchemas;

/** One call of a response tool, with its arguments. */
export type ResponseToolCall = {
  [K in ResponseToolName]: { tool: K; args: z.infer<(typeof responseToolSchemas)[K]> };
}[ResponseToolName];

/**
 * A tool call as a model answers it (structured output): the tool's name and its arguments, one
 * variant per tool, wrapped in an object (providers want an object at the root).
 */
export const responseToolCallSchema = z.object({
  call: z.discriminatedUnion('tool', [
    z.object({ tool: z.literal('send_email_tool'), args: responseToolSchemas.send_email_tool }),
    z.object({ tool: z.literal('schedule_meeting_tool'), args: responseToolSchemas.schedule_meeting_tool }),
    z.object({
      tool: z.literal('check_calendar_availability_tool'),
      args: responseToolSchemas.check_calendar_availability_tool,
    }),
    z.object({ tool: z.literal('Question'), args: responseToolSchemas.Question }),
    z.object({ tool: z.literal('Done'), args: responseToolSchemas.Done }),
  ]),
});

/** Whether a call waits for the human's review before it is carried out. */
export function isReviewed(
  tool: ResponseToolName,
): tool is 'send_email_tool' | 'schedule_meeting_tool' | 'Question' {
  return tool === 'send_email_tool' || tool === 'schedule_meeting_tool' || tool === 'Question';
}

/** What each tool is for, as the model is told (with its schema) when it is offered. */
export const responseToolDescriptions: Record<ResponseToolName, string> = {
  send_email_tool:
    'Write and send a reply email (to, subject, content). The user reviews it first: they may send it, edit it, or reject it with feedback.',
  schedule_meeting_tool:
    'Send a calendar invitation (attendees, subject, duration_minutes, preferred_day YYYY-MM-DD, start_time HH:MM, time_zone). Reviewed by the user first. Check availability before.',
  check_calendar_availability_tool:
    'Free time on a day (day YYYY-MM-DD, time_zone). Not reviewed; use it before proposing a meeting time.',
  Question: 'Ask the user something only they can answer (content). Their answer comes back as the result.',
  Done: 'Nothing more to do for this email (done: true): call it once the reply went out.',
};
