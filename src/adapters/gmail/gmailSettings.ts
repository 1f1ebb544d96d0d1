import { existsSync } from 'node:fs';
import { z } from 'zod';
import { count, HTTP_URL_WITHOUT_CREDENTIALS, oneOf } from '../../config/settingSchemas.js';
import { defineSettings, type EnvRecord, settingsFromEnv } from '../../config/settings.js';
import { savedTokenPath } from './gmailTokenFile.js';

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

/** The environment variables of the Gmail and Calendar adapter, with defaults and docs (the README's table). */
export const gmailSettings = defineSettings({
  GOOGLE_CLIENT_ID: {
    key: 'clientId',
    schema: z.string().regex(/^\S+$/u, 'the OAuth client id, without spaces (…apps.googleusercontent.com)'),
    shown: 'from the token file, else required',
    doc: 'The OAuth client id (Google Cloud console → APIs & Services → Credentials). Setting it, a refresh token or a token file (or the token `troupe gmail auth` saved in TROUPE_DATA_DIR) turns Gmail on for `troupe email` and `troupe inbox`.',
  },
  GOOGLE_CLIENT_SECRET: {
    key: 'clientSecret',
    schema: z.string().regex(/^\S+$/u, 'the OAuth client secret, without spaces'),
    secret: true,
    shown: 'from the token file, else required',
    doc: 'The OAuth client secret. Never logged or shown.',
  },
  GOOGLE_REFRESH_TOKEN: {
    key: 'refreshToken',
    schema: z.string().regex(/^\S+$/u, 'the refresh token alone, without spaces'),
    secret: true,
    shown: 'from the token file, else required',
    doc: 'A refresh token for the scopes gmail.modify, calendar.events and calendar.freebusy; wins over any token file. Never logged or shown. `troupe gmail auth` gets one and saves it in TROUPE_DATA_DIR instead.',
  },
  TROUPE_GMAIL_TOKEN_FILE: {
    key: 'tokenFile',
    schema: z.string(),
    shown: 'none',
    doc: 'A JSON token file as google-auth-library writes it (`refresh_token`, `access_token`, `expiry_date`; `client_id` and `client_secret` may be in it too); refreshed tokens are written back to it, mode 0600. Read instead of the `gmail-token.json` that `troupe gmail auth` saves in TROUPE_DATA_DIR.',
  },
  TROUPE_GMAIL_POLL_SECONDS: {
    key: 'pollSeconds',
    schema: count(5, 86_400, 'seconds'),
    default: 60,
    doc: 'How often `troupe email --watch` asks Gmail for new mail, 5 to 86400 seconds.',
  },
  TROUPE_GMAIL_SYNC_QUERY: {
    key: 'syncQuery',
    schema: z.string().max(500, 'a Gmail search of at most 500 characters'),
    default: 'newer_than:7d',
    keepBlank: true,
    doc: 'The Gmail search that picks the inbox messages read on the first run; empty: the whole inbox. (When Gmail no longer has the stored history, the inbox is read from a day before the cursor was stored instead, whatever this says.)',
  },
  TROUPE_GMAIL_MARK_READ: {
    key: 'markRead',
    schema: oneOf(['answered', 'never', 'always']),
    default: 'answered',
    doc: 'When Troupe marks an email read in Gmail: `answered` (only once you answered its interrupt or a reply went out; ignored and notify emails stay unread, labelled), `never`, or `always` (every email it closes).',
  },
  GOOGLE_API_URL: {
    key: 'apiUrl',
    schema: z
      .string()
      .regex(
        HTTP_URL_WITHOUT_CREDENTIALS,
        'an http(s) URL without credentials, e.g. https://gmail.googleapis.com/',
      )
      .transform((url) => url.replace(/\/*$/u, '/')),
    shown: 'Google’s own',
    doc: 'One base URL for the Gmail and Calendar APIs (a self-hosted proxy, or a fake in tests).',
  },
  GOOGLE_TOKEN_URL: {
    key: 'tokenUrl',
    schema: z
      .string()
      .regex(
        HTTP_URL_WITHOUT_CREDENTIALS,
        'an http(s) URL without credentials, e.g. https://oauth2.googleapis.com/token',
      ),
    shown: 'https://oauth2.googleapis.com/token',
    doc: 'The OAuth token endpoint (a proxy, or a fake in tests).',
  },
});

const optional = (raw: string | undefined) =>
  raw === undefined || raw.trim() === '' ? undefined : raw.trim();

/**
 * True when the environment asks for Gmail: a Google client id, refresh token or token file is
 * set, or `troupe gmail auth` saved a token in the data directory.
 */
export function gmailConfigured(env: EnvRecord): boolean {
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
export function gmailFromEnv(env: EnvRecord): GmailSettings {
  const value = settingsFromEnv(gmailSettings, env);
  const settings: GmailSettings = {
    pollSeconds: value.pollSeconds,
    syncQuery: value.syncQuery,
    markRead: value.markRead,
    savedTokenFile: savedTokenPath(env),
  };
  for (const key of [
    'clientId',
    'clientSecret',
    'refreshToken',
    'tokenFile',
    'apiUrl',
    'tokenUrl',
  ] as const) {
    const given = value[key];
    if (given !== undefined) settings[key] = given;
  }
  return settings;
}

/** The name {@link gmailFromEnv} had first. */
export const gmailSettingsFromEnv = gmailFromEnv;
