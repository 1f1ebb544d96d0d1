import { access, readFile } from 'node:fs/promises';
import { type Credentials, OAuth2Client } from 'google-auth-library';
import { z } from 'zod';
import { ConfigError, type ConfigProblem } from '../../config/configError.js';
import { zodIssues } from '../../config/zodIssues.js';
import { type Logger, silentLogger } from '../../logging/logger.js';
import { describe } from '../../ports/troupeError.js';
import type { GmailSettings } from './gmailSettings.js';
import { writeTokenFile } from './gmailTokenFile.js';

/** The token endpoint Google's OAuth client uses unless told otherwise. */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/** A token file: what google-auth-library writes (`Credentials`), and optionally the client (`authorized_user`). */
const tokenFileSchema = z
  .object({
    refresh_token: z.string().min(1).optional(),
    access_token: z.string().min(1).optional(),
    expiry_date: z.number().nullable().optional(),
    token_type: z.string().nullable().optional(),
    scope: z.string().optional(),
    id_token: z.string().nullable().optional(),
    client_id: z.string().min(1).optional(),
    client_secret: z.string().min(1).optional(),
  })
  .passthrough();

type TokenFile = z.infer<typeof tokenFileSchema>;

/** Complete OAuth credentials: the client and a refresh token, from the environment or the token file. */
export interface GmailCredentials {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
  /** A stored access token and its expiry, from the token file. */
  accessToken?: string;
  expiryDate?: number;
  /** Where refreshed tokens are written back, if a token file is used. */
  tokenFile?: string;
  /** The token file as read, kept whole when written back. */
  stored?: TokenFile;
}

/**
 * The token file to read: TROUPE_GMAIL_TOKEN_FILE when set, else the one `troupe gmail auth`
 * saved in the data directory when it exists, else none.
 */
async function tokenFileOf(settings: GmailSettings): Promise<{ path: string; variable: string } | undefined> {
  if (settings.tokenFile) return { path: settings.tokenFile, variable: 'TROUPE_GMAIL_TOKEN_FILE' };
  if (!settings.savedTokenFile) return undefined;
  try {
    await access(settings.savedTokenFile);
    return { path: settings.savedTokenFile, variable: 'TROUPE_DATA_DIR' };
  } catch {
    return undefined;
  }
}

/**
 * The credentials from the settings and a token file. Each of the client id, client secret and
 * refresh token comes from the environment when set there (GOOGLE_CLIENT_ID, GOOGLE_CLIENT_SECRET,
 * GOOGLE_REFRESH_TOKEN), else from TROUPE_GMAIL_TOKEN_FILE, else from the file `troupe gmail auth`
 * saved in the data directory.
 *
 * @throws ConfigError `TROUPE_CONFIG_INVALID` naming what is missing or unreadable, all at once.
 */
export async function readGmailCredentials(settings: GmailSettings): Promise<GmailCredentials> {
  const problems: ConfigProblem[] = [];
  let stored: TokenFile | undefined;
  const file = await tokenFileOf(settings);
  if (file) {
    try {
      const parsed = tokenFileSchema.safeParse(JSON.parse(await readFile(file.path, 'utf8')));
      if (parsed.success) stored = parsed.data;
      else
        problems.push({
          variable: file.variable,
          value: file.path,
          expected: `a JSON token file as google-auth-library or \`troupe gmail auth\` writes it (${zodIssues(parsed.error)})`,
        });
    } catch (error) {
      problems.push({
        variable: file.variable,
        value: file.path,
        expected: `a readable JSON token file (${describe(error).replace(/\s+/gu, ' ').slice(0, 200)})`,
      });
    }
  }
  const clientId = settings.clientId ?? stored?.client_id;
  const clientSecret = settings.clientSecret ?? stored?.client_secret;
  const refreshToken = settings.refreshToken ?? stored?.refresh_token;
  const fileRead = file === undefined || stored !== undefined;
  if (!clientId && fileRead)
    problems.push({
      variable: 'GOOGLE_CLIENT_ID',
      value: '',
      expected: 'the OAuth client id (Google Cloud console → APIs & Services → Credentials)',
    });
  if (!clientSecret && fileRead)
    problems.push({ variable: 'GOOGLE_CLIENT_SECRET', value: '', expected: 'the OAuth client secret' });
  if (!refreshToken && fileRead)
    problems.push({
      variable: 'GOOGLE_REFRESH_TOKEN',
      value: '',
      expected:
        'a refresh token for gmail.modify, calendar.events and calendar.freebusy: run `troupe gmail auth` (or set TROUPE_GMAIL_TOKEN_FILE to a file holding one)',
    });
  if (problems.length > 0 || !clientId || !clientSecret || !refreshToken) throw new ConfigError(problems);
  const fromFile = stored && stored.refresh_token === refreshToken;
  return {
    clientId,
    clientSecret,
    refreshToken,
    ...(fromFile && stored?.access_token ? { accessToken: stored.access_token } : {}),
    ...(fromFile && typeof stored?.expiry_date === 'number' ? { expiryDate: stored.expiry_date } : {}),
    ...(file ? { tokenFile: file.path } : {}),
    ...(stored ? { stored } : {}),
  };
}

/** The OAuth client and a way to wait for the token file to be written. */
export interface GmailAuth {
  client: OAuth2Client;
  tokenUrl: string;
  /** Resolves once every refreshed token seen so far is in the token file. */
  flush(): Promise<void>;
}

/**
 * An OAuth2 client for the credentials: it refreshes the access token when it expires (and once
 * on a 401), and each refreshed token is written back to the token file (mode 0600, written
 * whole and renamed into place, so a crash never leaves half a file).
 */
export function createGmailAuth(
  credentials: GmailCredentials,
  options: { tokenUrl?: string; logger?: Logger } = {},
): GmailAuth {
  const log = options.logger ?? silentLogger();
  const tokenUrl = options.tokenUrl ?? GOOGLE_TOKEN_URL;
  const client = new OAuth2Client({
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret,
    endpoints: { oauth2TokenUrl: tokenUrl },
    // A 401 on a token that looked valid (revoked early, clock skew) gets one refresh and retry.
    forceRefreshOnFailure: true,
  });
  client.setCredentials({
    refresh_token: credentials.refreshToken,
    ...(credentials.accessToken ? { access_token: credentials.accessToken } : {}),
    ...(credentials.expiryDate !== undefined ? { expiry_date: credentials.expiryDate } : {}),
  });
  let file: TokenFile = { ...(credentials.stored ?? {}), refresh_token: credentials.refreshToken };
  let writes = Promise.resolve();
  client.on('tokens', (tokens: Credentials) => {
    if (!credentials.tokenFile) return;
    const path = credentials.tokenFile;
    const merged: TokenFile = { ...file };
    for (const [key, value] of Object.entries(tokens))
      if (value !== undefined && value !== null) merged[key] = value;
    file = merged;
    writes = writes.then(async () => {
      try {
        await writeTokenFile(path, merged);
      } catch (error) {
        log.warn({ err: error, file: path }, 'could not save the refreshed Google token');
      }
    });
  });
  return { client, tokenUrl, flush: () => writes };
}
