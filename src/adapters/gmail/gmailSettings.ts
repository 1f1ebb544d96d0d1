import { existsSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, type ConfigProblem } from '../../config/configError.js';
import { savedTokenPath } from './gmailTokenFile.js';

type Env = Readonly<Record<string, string | undefined>>;

/** The environment variables of the Gmail and Calendar adapter, with defaults and docs (the README's table). */
export const gmailSettings = {
  GOOGLE_CLIENT_ID: {
    default: 'from the token file, else required',
    doc: 'The OAuth client id (Google Cloud console → APIs & Services → Credentials). Setting it, a refresh token or a token file (or the token `troupe gmail auth` saved in TROUPE_DATA_DIR) turns Gmail on for `troupe email` and `troupe inbox`.',
  },
  GOOGLE_CLIENT_SECRET: {
    default: 'from the token file, else required',
    doc: 'The OAuth client secret. Never logged or shown.',
  },
  GOOGLE_REFRESH_TOKEN: {
    default: 'from the token file, else required',
    doc: 'A refresh token for the scopes gmail.modify, calendar.events and calendar.freebusy; wins over any token file. Never logged or shown. `troupe gmail auth` gets one and saves it in TROUPE_DATA_DIR instead.',
  },
  TROUPE_GMAIL_TOKEN_FILE: {
    default: 'none',
    doc: 'A JSON token file as google-auth-library writes it (`refresh_token`, `access_token`, `expiry_date`; `client_id` and `client_secret` may be in it too); refreshed tokens are written back to it, mode 0600. Read instead of the `gmail-token.json` that `troupe gmail auth` saves in TROUPE_DATA_DIR.',
  },
  TROUPE_GMAIL_POLL_SECONDS: {
    default: '60',
    doc: 'How often `troupe email --watch` asks Gmail for new mail, 5 to 86400 seconds.',
  },
  TROUPE_GMAIL_SYNC_QUERY: {
    default: 'newer_than:7d',
    doc: 'The Gmail search that picks the inbox messages read on the first run; empty: the whole inbox. (When Gmail no longer has the stored history, the inbox is read from a day before the cursor was stored instead, whatever this says.)',
  },
  TROUPE_GMAIL_MARK_READ: {
    default: 'answered',
    doc: 'When Troupe marks an email read in Gmail: `answered` (only once you answered its interrupt or a reply went out; ignored and notify emails stay unread, labelled), `never`, or `always` (every email it closes).',
  },
  GOOGLE_API_URL: {
    default: 'Google’s own',
    doc: 'One base URL for the Gmail and Calendar APIs (a self-hosted proxy, or a fake in tests).',
  },
  GOOGLE_TOKEN_URL: {
    default: 'https://oauth2.googleapis.com/token',
    doc: 'The OAuth token endpoint (a proxy, or a fake in tests).',
  },
} as const;

/** When closing an email marks it read: once a person saw it, never, or always. */
export type MarkReadPolicy = 'answered' | 'never' | 'always';

/** The Gmail settings, parsed. */
export interface GmailSettings {
  clientId?: string;
  clientSecret?: string;
  refreshToken?: string;
  tokenFile?: string;
  /** Where `troupe gmail auth` saves the token (read when no TROUPE_GMAIL_TOKEN_FILE is set and it exists). */
  savedTokenFile?: string;
  pollSeconds: number;
  syncQuery: string;
  markRead: MarkReadPolicy;
  apiUrl?: string;
  tokenUrl?: string;
}

const SECRET = new Set(['GOOGLE_CLIENT_SECRET', 'GOOGLE_REFRESH_TOKEN']);
const URL_ = /^https?:\/\/[^\s/@]+(\/\S*)?$/u;

const variables = {
  GOOGLE_CLIENT_ID: z
    .string()
    .regex(/^\S+$/u, 'the OAuth client id, without spaces (…apps.googleusercontent.com)')
    .optional(),
  GOOGLE_CLIENT_SECRET: z.string().regex(/^\S+$/u, 'the OAuth client secret, without spaces').optional(),
  GOOGLE_REFRESH_TOKEN: z.string().regex(/^\S+$/u, 'the refresh token alone, without spaces').optional(),
  TROUPE_GMAIL_TOKEN_FILE: z.string().optional(),
  TROUPE_GMAIL_POLL_SECONDS: z
    .string()
    .regex(/^\d{1,5}$/u, 'a whole number of seconds from 5 to 86400')
    .transform(Number)
    .refine((n) => n >= 5 && n <= 86_400, { message: 'a whole number of seconds from 5 to 86400' })
    .optional(),
  TROUPE_GMAIL_SYNC_QUERY: z.string().max(500, 'a Gmail search of at most 500 characters').optional(),
  TROUPE_GMAIL_MARK_READ: z
    .string()
    .transform((v) => v.toLowerCase())
    .pipe(z.enum(['answered', 'never', 'always'], 'one of answered, never, always'))
    .optional(),
  GOOGLE_API_URL: z
    .string()
    .regex(URL_, 'an http(s) URL without credentials, e.g. https://gmail.googleapis.com/')
    .transform((url) => url.replace(/\/*$/u, '/'))
    .optional(),
  GOOGLE_TOKEN_URL: z
    .string()
    .regex(URL_, 'an http(s) URL without credentials, e.g. https://oauth2.googleapis.com/token')
    .optional(),
} as const;

const optional = (raw: string | undefined) =>
  raw === undefined || raw.trim() === '' ? undefined : raw.trim();

/**
 * True when the environment asks for Gmail: a Google client id, refresh token or token file is
 * set, or `troupe gmail auth` saved a token in the data directory.
 */
export function gmailConfigured(env: Env): boolean {
  return (
    ['GOOGLE_CLIENT_ID', 'GOOGLE_REFRESH_TOKEN', 'TROUPE_GMAIL_TOKEN_FILE'].some(
      (v) => optional(env[v]) !== undefined,
    ) || existsSync(savedTokenPath(env))
  );
}

/**
 * Reads the Gmail settings from the environment, each variable with its zod schema. Whether the
 * credentials are complete is checked once the token file is read ({@link readGmailCredentials}).
 *
 * @throws ConfigError `TROUPE_CONFIG_INVALID` naming every bad variable at once (secrets are
 *   never quoted).
 */
export function gmailSettingsFromEnv(env: Env): GmailSettings {
  const problems: ConfigProblem[] = [];
  const values: Record<string, unknown> = {};
  for (const [variable, schema] of Object.entries(variables) as [keyof typeof variables, z.ZodType][]) {
    const raw = variable === 'TROUPE_GMAIL_SYNC_QUERY' ? env[variable]?.trim() : optional(env[variable]);
    const parsed = schema.safeParse(raw);
    if (parsed.success) {
      values[variable] = parsed.data;
      continue;
    }
    problems.push({
      variable,
      value: SECRET.has(variable) ? '(hidden)' : (raw ?? ''),
      expected: parsed.error.issues[0]?.message ?? 'a valid value',
    });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const pick = (v: keyof typeof variables) => values[v] as string | undefined;
  const settings: GmailSettings = {
    pollSeconds: (values.TROUPE_GMAIL_POLL_SECONDS as number | undefined) ?? 60,
    syncQuery: pick('TROUPE_GMAIL_SYNC_QUERY') ?? 'newer_than:7d',
    markRead: (values.TROUPE_GMAIL_MARK_READ as MarkReadPolicy | undefined) ?? 'answered',
    savedTokenFile: savedTokenPath(env),
  };
  const set = <K extends keyof GmailSettings>(key: K, value: GmailSettings[K] | undefined) => {
    if (value !== undefined) settings[key] = value;
  };
  set('clientId', pick('GOOGLE_CLIENT_ID'));
  set('clientSecret', pick('GOOGLE_CLIENT_SECRET'));
  set('refreshToken', pick('GOOGLE_REFRESH_TOKEN'));
  set('tokenFile', pick('TROUPE_GMAIL_TOKEN_FILE'));
  set('apiUrl', pick('GOOGLE_API_URL'));
  set('tokenUrl', pick('GOOGLE_TOKEN_URL'));
  return settings;
}
