import { z } from 'zod';

/** Where the assistant keeps what it learned, under the names other tools use (namespace, key). */
export const memoryNamespaces = {
  triage: 'email_assistant/triage_preferences',
  response: 'email_assistant/response_preferences',
  calendar: 'email_assistant/cal_preferences',
} as const;

/** The key every preference profile is stored under. */
export const PREFERENCES_KEY = 'user_preferences';

/** A sender or subject rule that decides an email without asking a model. */
export const triageRuleSchema = z
  .object({
    /** Part of the sender's address or name (any case), e.g. `@newsletter.example` or `noreply`. */
    from: z.string().trim().min(1).max(200).optional(),
    /** Part of the subject (any case). */
    subject: z.string().trim().min(1).max(200).optional(),
    classification: z.enum(['ignore', 'notify', 'respond']),
    /** Why, as the decision will say it. */
    reason: z.string().trim().max(300).optional(),
  })
  .refine((r) => r.from !== undefined || r.subject !== undefined, {
    message: 'a rule needs from or subject',
  });

/** See {@link triageRuleSchema}. */
export type TriageRule = z.infer<typeof triageRuleSchema>;

/**
 * The longest triage instructions kept: memory updates compact the profile before it gets there,
 * and a longer one is read compacted by rule, never replaced by the defaults.
 */
export const MAX_TRIAGE_INSTRUCTIONS = 20_000;

/** The most sender or subject rules kept. */
export const MAX_TRIAGE_RULES = 500;

/**
 * The triage preferences: instructions in prose (what the model reads, and what memory updates
 * refine) with a section per classification, and optional rules that decide obvious cases first.
 */
export const triagePreferencesSchema = z.object({
  instructions: z.string().trim().min(1).max(MAX_TRIAGE_INSTRUCTIONS),
  rules: z.array(triageRuleSchema).max(MAX_TRIAGE_RULES).default([]),
});

/** See {@link triagePreferencesSchema}. */
export type TriagePreferences = z.infer<typeof triagePreferencesSchema>;

/** Who the assistant works for, for every prompt. */
export const defaultBackground =
  "I'm the email assistant of a software engineer on a small product team. I read their mail, decide what needs them, and draft replies in their voice.";

/**
 * The preferences written the first time they are read. Each section lists kinds of email, one per
 * line; the offline router matches their words, a model reads the prose.
 */
export const defaultTriagePreferences: TriagePreferences = {
  instructions: [
    'Ignore: emails that need nothing from me and that I do not need to know about.',
    '- marketing newsletters, promotions, sales offers and discounts',
    '- spam, phishing and unsubscribe notices',
    '- mass company announcements and social events for everyone',
    '- automated receipts and shipping updates',
    '',
    'Notify: emails worth knowing about that need no reply.',
    '- a team member out sick or on vacation',
    '- build, deploy or CI failure and system alert notifications',
    '- project status updates and FYI notes without action items',
    '- security alerts and password changes',
    '- documents shared with me, and calendar changes made by others',
    '',
    'Respond: emails that need an answer from me.',
    '- direct questions from team members, customers or managers',
    '- meeting requests, scheduling and availability questions',
    '- critical bug reports and production incidents assigned to me',
    '- requests for review, approval, feedback or a decision',
    '- follow-ups on a conversation I started',
  ].join('\n'),
  // Senders that only ever send newsletters; automated senders in general are not ignored, since
  // a CI failure or a security alert comes from one too.
  rules: [
    { from: 'newsletter', classification: 'ignore', reason: 'a newsletter sender' },
    { from: 'marketing@', classification: 'ignore', reason: 'a marketing sender' },
  ],
};
