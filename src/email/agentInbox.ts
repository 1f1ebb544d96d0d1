import { z } from 'zod';
import { zodIssues } from '../config/zodIssues.js';
import type { Email } from './emailInput.js';
import { emailMarkdown, escapedText } from './emailMarkdown.js';
import { memoryNamespaces } from './triagePreferences.js';

/** What a human may do with an interrupt (Agent Inbox's `config`). */
export interface InterruptConfig {
  allow_ignore: boolean;
  allow_respond: boolean;
  allow_edit: boolean;
  allow_accept: boolean;
}

/** One request to the human, in the Agent Inbox shape. */
export interface InterruptRequest {
  action_request: { action: string; args: Record<string, unknown> };
  config: InterruptConfig;
  /** Markdown shown to the human: the email, or the email and the proposed action. */
  description: string;
}

/** The tools whose calls stop for the human's review, and what each allows. */
export const reviewedTools = {
  send_email_tool: { allow_ignore: true, allow_respond: true, allow_edit: true, allow_accept: true },
  schedule_meeting_tool: { allow_ignore: true, allow_respond: true, allow_edit: true, allow_accept: true },
  Question: { allow_ignore: true, allow_respond: true, allow_edit: false, allow_accept: false },
} as const satisfies Record<string, InterruptConfig>;

/** A tool whose calls are reviewed. */
export type ReviewedTool = keyof typeof reviewedTools;

/** The action name of the notify interrupt. */
export const NOTIFY_ACTION = 'Email Assistant: notify';

/** What the notify interrupt allows: respond (with feedback) or ignore. */
export const notifyConfig: Readonly<InterruptConfig> = {
  allow_ignore: true,
  allow_respond: true,
  allow_edit: false,
  allow_accept: false,
};

/** The notify interrupt: the email for the human, who may respond (with feedback) or ignore it. */
export function notifyInterrupt(email: Email): InterruptRequest {
  return {
    action_request: { action: NOTIFY_ACTION, args: {} },
    config: { ...notifyConfig },
    description: emailMarkdown(email),
  };
}

/** The review interrupt for a proposed tool call: the email, then what the assistant wants to do. */
export function toolInterrupt(
  email: Email,
  tool: ReviewedTool,
  args: Record<string, unknown>,
): InterruptRequest {
  const proposal =
    tool === 'Question'
      ? `# Question for you\n\n${escapedText(String(args.content ?? ''))}`
      : `# Proposed: ${tool}\n\n${Object.entries(args)
          .map(
            ([k, v]) =>
              `**${k}**: ${escapedText(typeof v === 'string' ? v : JSON.stringify(v), { fromLine: 1 })}`,
          )
          .join('\n')}`;
  return {
    action_request: { action: tool, args },
    config: { ...reviewedTools[tool] },
    description: `${emailMarkdown(email)}\n\n${proposal}`,
  };
}

/** A human's answer, in the Agent Inbox shape. */
export const humanResponseSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('accept'), args: z.unknown().optional() }),
  z.object({
    type: z.literal('edit'),
    // Agent Inbox sends `{ action, args }`; the arguments may also come bare (only the fields
    // changed, say) or as a JSON string. editedArgs() reads all three.
    args: z.union([z.string(), z.record(z.string(), z.unknown())]),
  }),
  z.object({ type: z.literal('response'), args: z.string().trim().min(1, 'feedback is empty').max(20_000) }),
  z.object({ type: z.literal('ignore'), args: z.unknown().optional() }),
]);

/** See {@link humanResponseSchema}. */
export type HumanResponse = z.infer<typeof humanResponseSchema>;

const ALLOWS: Record<HumanResponse['type'], keyof InterruptConfig> = {
  accept: 'allow_accept',
  edit: 'allow_edit',
  response: 'allow_respond',
  ignore: 'allow_ignore',
};

/** Why an answer is not allowed for this interrupt, or `undefined` when it is. */
export function disallowed(request: InterruptRequest, response: HumanResponse): string | undefined {
  if (request.config[ALLOWS[response.type]]) return undefined;
  const allowed = (Object.keys(ALLOWS) as HumanResponse['type'][]).filter((t) => request.config[ALLOWS[t]]);
  return `“${response.type}” is not allowed for ${request.action_request.action}; allowed: ${allowed.join(', ')}`;
}

/**
 * The edited arguments of an `edit` answer, validated against the tool's schema: given as an
 * object or as a JSON string (Agent Inbox's text editor), with or without the `{ action, args }`
 * wrapper. With `proposed`, fields the edit leaves out keep their proposed values. Returns the
 * parsed arguments or the problems.
 */
export function editedArgs<Schema extends z.ZodType>(
  response: Extract<HumanResponse, { type: 'edit' }>,
  schema: Schema,
  proposed?: Record<string, unknown>,
): { ok: true; args: z.output<Schema> } | { ok: false; problem: string } {
  let raw: unknown = response.args;
  if (typeof raw === 'string') {
    try {
      raw = JSON.parse(raw);
    } catch {
      return { ok: false, problem: 'the edited arguments are not JSON' };
    }
  }
  if (typeof raw === 'object' && raw !== null && 'args' in raw) raw = (raw as { args: unknown }).args;
  if (typeof raw === 'string') {
    try {
      raw = JSON.parse(raw);
    } catch {
      return { ok: false, problem: 'the edited arguments are not JSON' };
    }
  }
  // A field the tool does not have (a typo, `__proto__`) would be dropped silently and the draft
  // sent without the change the person meant: refuse it, naming the fields there are.
  if (schema instanceof z.ZodObject && typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    const fields = Object.keys(schema.shape);
    const unknown = Object.keys(raw).filter((key) => !fields.includes(key));
    if (unknown.length > 0)
      return {
        ok: false,
        problem: `no field ${unknown.map((k) => `“${k}”`).join(', ')} (the fields are ${fields.join(', ')})`,
      };
  }
  // Fields the edit leaves out keep their proposed values (`{"start_time": "11:00"}` moves a meeting).
  if (proposed && typeof raw === 'object' && raw !== null && !Array.isArray(raw))
    raw = { ...proposed, ...(raw as Record<string, unknown>) };
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    return {
      ok: false,
      problem: zodIssues(parsed.error),
    };
  return { ok: true, args: parsed.data };
}

/** A memory update a human's answer calls for (the table below), or none. */
export interface MemoryUpdateRequest {
  namespace: (typeof memoryNamespaces)[keyof typeof memoryNamespaces];
  /** Human-in-the-loop updates add the reinforcement instruction: targeted changes only. */
  reinforce: boolean;
  /** What happened, for the update prompt. */
  reason: string;
}

/**
 * Which preferences a human's answer updates, by this table: a notify answered
 * with respond or ignore, and an ignored draft, invitation or question, update triage preferences;
 * an edited or commented email updates response preferences; an edited or commented meeting
 * updates calendar preferences. Accepting updates nothing, nor does answering a question.
 */
export function memoryUpdateFor(action: string, response: HumanResponse): MemoryUpdateRequest | undefined {
  if (action === NOTIFY_ACTION) {
    if (response.type === 'response')
      return {
        namespace: memoryNamespaces.triage,
        reinforce: true,
        reason: 'the user chose to reply to an email triaged as notify',
      };
    if (response.type === 'ignore')
      return {
        namespace: memoryNamespaces.triage,
        reinforce: true,
        reason: 'the user ignored an email triaged as notify',
      };
    return undefined;
  }
  if (
    response.type === 'ignore' &&
    (action === 'send_email_tool' || action === 'schedule_meeting_tool' || action === 'Question')
  )
    return {
      namespace: memoryNamespaces.triage,
      reinforce: true,
      reason: `the user ignored the ${describeAction(action)}, so the email should not have been answered`,
    };
  if (action === 'send_email_tool' && (response.type === 'edit' || response.type === 'response'))
    return {
      namespace: memoryNamespaces.response,
      reinforce: true,
      reason:
        response.type === 'edit'
          ? 'the user edited the drafted email'
          : 'the user gave feedback on the drafted email',
    };
  if (action === 'schedule_meeting_tool' && (response.type === 'edit' || response.type === 'response'))
    return {
      namespace: memoryNamespaces.calendar,
      reinforce: true,
      reason:
        response.type === 'edit'
          ? 'the user edited the meeting invitation'
          : 'the user gave feedback on the meeting invitation',
    };
  return undefined;
}

function describeAction(action: string): string {
  if (action === 'send_email_tool') return 'drafted email';
  if (action === 'schedule_meeting_tool') return 'meeting invitation';
  return 'question';
}
