import type { Prompt } from '../ports/model.js';
import type { ObjectModel } from '../ports/objectModel.js';
import { greetingName, senderAddress as senderOf } from './emailAddress.js';
import type { Email } from './emailInput.js';
import { type ResponseToolCall, responseToolCallSchema } from './responseTools.js';
import { untrustedEmail } from './triagePrompt.js';

/** Free time on a day, as the calendar tool reports it (local times in the request's zone). */
export interface Availability {
  day: string;
  time_zone: string;
  free: { start: string; end: string }[];
}

/** A call carried out for this email, with what it gave back. */
export interface AgentStep {
  call: ResponseToolCall;
  result?: unknown;
}

/** Everything the response agent decides its next call from. */
export interface ResponseAgentInput {
  email: Email;
  /** How the user likes emails written (memory `response_preferences`). */
  responsePreferences: string;
  /** How the user likes meetings scheduled (memory `cal_preferences`). */
  calendarPreferences: string;
  /** The human's feedback on this email, oldest first. */
  feedback: readonly string[];
  /** Calls carried out so far for this email. */
  steps: readonly AgentStep[];
  /** The user's name, for sign-offs. */
  userName: string;
  /** The user's time zone (IANA), for days and times. */
  timeZone: string;
  /** Epoch ms, to pick the next working day. */
  now: number;
}

// CSI and OSC escape sequences (colours, cursor moves, window titles), then any run of whitespace
// or other control characters.
const ESCAPE_SEQUENCE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing escape sequences is the point
  /\u001b\[[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]?|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/gu;
// biome-ignore lint/suspicious/noControlCharactersInRegex: as above
const BREAKS_AND_CONTROLS = /[\s\u0000-\u001f\u007f-\u009f\u2028\u2029]+/gu;

const MEETING = /\b(meet|meeting|call|availab\w*|schedul\w*|slot|calendar|catch up|sync)\b/iu;

/**
 * The response agent's next tool call for an email (seed 002's tool loop, one step). With a
 * model, it answers with structured output choosing one tool and its arguments, from the email
 * (framed as untrusted data), the preferences, the human's feedback and the steps so far. Without
 * one, an offline agent does what such an email usually needs: a meeting request gets the calendar
 * checked, then an invitation for the first free slot; anything else gets a reply written from a
 * template around the human's latest feedback; once something was sent, it is done.
 */
export async function nextToolCall(
  input: ResponseAgentInput,
  model?: ObjectModel,
): Promise<ResponseToolCall> {
  if (model) {
    const answer = await model.generateObject({
      prompt: agentPrompt(input),
      schema: responseToolCallSchema,
      schemaName: 'tool_call',
    });
    return answer.call as ResponseToolCall;
  }
  return offlineToolCall(input);
}

/** The offline agent (see {@link nextToolCall}). Deterministic. */
export function offlineToolCall(input: ResponseAgentInput): ResponseToolCall {
  const { email, steps } = input;
  if (steps.some((s) => s.call.tool === 'send_email_tool' || s.call.tool === 'schedule_meeting_tool'))
    return { tool: 'Done', args: { done: true } };
  const sender = senderAddress(email.from);
  const topic = headerText(email.subject).replace(/^(re|fwd?):\s*/iu, '') || 'your email';
  if (MEETING.test(`${email.subject}\n${email.body}`)) {
    const checked = [...steps].reverse().find((s) => s.call.tool === 'check_calendar_availability_tool');
    if (!checked) {
      return {
        tool: 'check_calendar_availability_tool',
        args: { day: nextWorkingDay(input.now, input.timeZone), time_zone: input.timeZone },
      };
    }
    const availability = checked.result as Availability | undefined;
    const minutes = meetingMinutes(input.calendarPreferences);
    const slot = availability?.free.find((f) => minutesOf(f.end) - minutesOf(f.start) >= minutes);
    if (availability && slot) {
      return {
        tool: 'schedule_meeting_tool',
        args: {
          attendees: [sender],
          subject: topic,
          duration_minutes: minutes,
          preferred_day: availability.day,
          start_time: slot.start,
          time_zone: availability.time_zone,
        },
      };
    }
    return reply(
      input,
      sender,
      `I am fully booked on ${availability?.day ?? 'that day'}; could you suggest another day?`,
    );
  }
  return reply(input, sender, `Thanks for your email about “${topic}”.`);
}

function reply(input: ResponseAgentInput, to: string, opening: string): ResponseToolCall {
  const first = firstName(input.email.from);
  const latest = input.feedback.at(-1)?.trim();
  const body = latest ? `${opening} ${sentence(latest)}` : `${opening} I will get back to you shortly.`;
  const original = headerText(input.email.subject);
  const subject = /^re:/iu.test(original) ? original : `Re: ${original}`;
  return {
    tool: 'send_email_tool',
    args: { to, subject, content: `Hi ${first},\n\n${body}\n\nBest,\n${input.userName}` },
  };
}

function agentPrompt(input: ResponseAgentInput): Prompt {
  const steps = input.steps.map(
    (s, i) =>
      `${i + 1}. ${s.call.tool}(${JSON.stringify(s.call.args)}) → ${JSON.stringify(s.result ?? null)}`,
  );
  return {
    system: [
      '< Role >',
      `You are ${input.userName}'s email assistant. Handle the email with exactly one tool call at a time.`,
      '</ Role >',
      '',
      '< Tools >',
      '- send_email_tool(to, subject, content): write and send the reply (the user reviews it first).',
      '- schedule_meeting_tool(attendees, subject, duration_minutes, preferred_day, start_time, time_zone): send an invitation (reviewed).',
      '- check_calendar_availability_tool(day, time_zone): free time on a day; check before proposing a meeting.',
      '- Question(content): ask the user something only they can answer.',
      '- Done(done: true): nothing more to do (after the reply or invitation went out).',
      '</ Tools >',
      '',
      `< Time zone >\n${input.timeZone}; today is ${new Date(input.now).toISOString().slice(0, 10)}.\n</ Time zone >`,
      '',
      `< Response preferences >\n${input.responsePreferences}\n</ Response preferences >`,
      '',
      `< Calendar preferences >\n${input.calendarPreferences}\n</ Calendar preferences >`,
    ].join('\n'),
    messages: [
      {
        role: 'user',
        content: [
          untrustedEmail(input.email),
          '',
          input.feedback.length > 0
            ? `The user's feedback so far:\n${input.feedback.map((f) => `- ${f}`).join('\n')}`
            : 'No feedback from the user yet.',
          '',
          steps.length > 0 ? `Calls made so far:\n${steps.join('\n')}` : 'No calls made yet.',
        ].join('\n'),
      },
    ],
  };
}

/**
 * An email's subject as a header of the reply: on one line, control characters (escape codes)
 * removed, so a subject with line breaks cannot add headers to the reply.
 */
function headerText(value: string): string {
  return value.replace(ESCAPE_SEQUENCE, '').replace(BREAKS_AND_CONTROLS, ' ').trim();
}

/** The sender's address (a From header parsed as an address list: `"Rossi, Marco" <m@x>` is one). */
function senderAddress(from: string): string {
  return headerText(senderOf(from));
}

/** The name to greet the sender by (`Marco` for `"Rossi, Marco" <m@x>`). */
function firstName(from: string): string {
  return greetingName(from);
}

function sentence(text: string): string {
  const s = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/u.test(s) ? s : `${s}.`;
}

function meetingMinutes(preferences: string): number {
  const match = /(\d{1,3})\s*(?:minutes|min)\b/iu.exec(preferences);
  const minutes = match ? Number(match[1]) : 30;
  return minutes >= 5 && minutes <= 480 ? minutes : 30;
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** The next Monday-to-Friday after `now`, as YYYY-MM-DD in `timeZone`. */
function nextWorkingDay(now: number, timeZone: string): string {
  const format = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    weekday: 'short',
  });
  for (let days = 1; days <= 7; days += 1) {
    const parts = format.formatToParts(new Date(now + days * 86_400_000));
    const weekday = parts.find((p) => p.type === 'weekday')?.value;
    if (weekday === 'Sat' || weekday === 'Sun') continue;
    const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
    return `${get('year')}-${get('month')}-${get('day')}`;
  }
  return new Date(now + 86_400_000).toISOString().slice(0, 10);
}
