/** The environment variables of `troupe email` and `troupe inbox`, with defaults and docs. */
export const emailSettings = {
  TROUPE_EMAIL_USER: {
    default: 'Sam',
    doc: 'The name the assistant signs replies with.',
  },
  TROUPE_EMAIL_TIME_ZONE: {
    default: 'UTC',
    doc: 'The user’s time zone (IANA, e.g. Europe/Berlin), for calendar days and meeting times.',
  },
  TROUPE_EMAIL_NOW: {
    default: 'the system clock',
    doc: 'Pins the assistant’s clock to an ISO time (reproducible runs, examples).',
  },
} as const;
