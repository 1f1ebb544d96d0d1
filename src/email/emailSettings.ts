import { count, text } from '../config/settingSchemas.js';
import { defineSettings } from '../config/settings.js';

/** The environment variables of `troupe email` and `troupe inbox`, with defaults and docs. */
export const emailSettings = defineSettings({
  TROUPE_EMAIL_USER: {
    key: 'userName',
    schema: text,
    default: 'Sam',
    doc: 'The name the assistant signs replies with.',
  },
  TROUPE_EMAIL_TIME_ZONE: {
    key: 'timeZone',
    schema: text,
    default: 'UTC',
    doc: 'The user’s time zone (IANA, e.g. Europe/Berlin), for calendar days and meeting times.',
  },
  TROUPE_EMAIL_NOW: {
    key: 'now',
    schema: text,
    shown: 'the system clock',
    doc: 'Pins the assistant’s clock to an ISO time (reproducible runs, examples).',
  },
  TROUPE_EMAIL_BACKGROUND: {
    key: 'background',
    schema: text,
    shown: 'a sentence naming the user (TROUPE_EMAIL_USER)',
    doc: 'Who the user is and their role, for triage and the response agent: the text itself, or `@path` to read it from a file (at most 4,000 characters).',
  },
  TROUPE_EMAIL_MAX_STEPS: {
    key: 'maxSteps',
    schema: count(1, 100),
    default: 12,
    doc: 'Model steps the response agent may take on one email (1–100); past it the email fails with TROUPE_EMAIL_AGENT_LIMIT.',
  },
  TROUPE_EMAIL_MAX_UNREVIEWED_CALLS: {
    key: 'maxUnreviewedCalls',
    schema: count(0, 50),
    default: 3,
    doc: 'Calls of a tool that needs no review (the calendar check) per email (0–50); past it the email fails with TROUPE_EMAIL_AGENT_LIMIT.',
  },
});

/** The longest background the prompts take. */
export const MAX_BACKGROUND = 4_000;

/** The background used when `TROUPE_EMAIL_BACKGROUND` is not set: a neutral sentence naming the user. */
export function defaultUserBackground(userName: string): string {
  return `I am the email assistant of ${userName}: I read their mail, decide what needs them, and draft replies in their voice.`;
}
