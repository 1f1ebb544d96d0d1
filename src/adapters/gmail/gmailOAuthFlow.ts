import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CodeChallengeMethod, type Credentials, OAuth2Client } from 'google-auth-library';
import { type Logger, silentLogger } from '../../logging/logger.js';
import { TroupeError } from '../../ports/troupeError.js';
import { GOOGLE_TOKEN_URL } from './gmailAuth.js';
import { googleError, readGoogleFailure } from './googleError.js';

/** Google's consent page. */
export const GOOGLE_AUTH_URL = 'https://accounts.google.com/o/oauth2/v2/auth';

/** What Troupe asks for: read and label mail, send replies; read free/busy and add events. */
export const GMAIL_SCOPES = [
  'https://www.googleapis.com/auth/gmail.modify',
  'https://www.googleapis.com/auth/calendar.events',
  'https://www.googleapis.com/auth/calendar.freebusy',
] as const;

/** Where Google sends the browser back to, on the loopback address. */
const CALLBACK_PATH = '/oauth2callback';

/** How {@link runInstalledAppFlow} runs. */
export interface InstalledAppFlowOptions {
  clientId: string;
  clientSecret: string;
  /** The token endpoint (default Google's). */
  tokenUrl?: string;
  /** The consent page (default Google's). */
  authUrl?: string;
  /** Shows the person the consent page's URL to open, and the loopback address that waits. */
  onUrl: (url: string, redirectUri: string) => void;
  /** Stops waiting (Ctrl-C). */
  signal?: AbortSignal;
  /** How long to wait for the browser (default 5 minutes). */
  timeoutMs?: number;
  logger?: Logger;
}

/** What the flow got: a refresh token (never logged) and the scopes Google granted. */
export interface InstalledAppGrant {
  refreshToken: string;
  scope?: string;
}

const authFailure = (message: string) => new TroupeError('TROUPE_GMAIL_AUTH', message);

/** Answers the browser; resolves once the answer is out (the server closes right after the last one). */
function page(response: ServerResponse, status: number, text: string): Promise<void> {
  return new Promise((resolve) => {
    response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
    response.end(`${text}\n`, () => resolve());
  });
}

/**
 * Google's installed-app OAuth flow on a loopback redirect: a server on 127.0.0.1 (an ephemeral
 * port) waits for the browser, the consent page is asked for offline access with a fresh consent
 * (so a refresh token comes back), PKCE (S256) and a random `state`. An answer whose state is not
 * the one sent is refused (400) and the flow goes on waiting; the code of the right one is
 * exchanged for tokens (`getToken`).
 *
 * @throws TroupeError `TROUPE_GMAIL_AUTH` when the person declines, Google gives no refresh token
 *   or not every scope, the exchange is refused, the wait times out or is stopped.
 */
export async function runInstalledAppFlow(options: InstalledAppFlowOptions): Promise<InstalledAppGrant> {
  const tokenUrl = options.tokenUrl ?? GOOGLE_TOKEN_URL;
  const state = randomBytes(32).toString('base64url');
  let settle: { resolve: (grant: InstalledAppGrant) => void; reject: (error: unknown) => void } | undefined;
  const done = new Promise<InstalledAppGrant>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // Rejected maybe before it is awaited (stopped while the consent URL is made): not unhandled.
  done.catch(() => undefined);
  let receive: ((request: IncomingMessage, response: ServerResponse) => Promise<void>) | undefined;
  const server = createServer((request, response) => {
    if (!receive) return void page(response, 503, 'Troupe is not ready yet; try again.');
    receive(request, response).catch((error: unknown) => settle?.reject(error));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const fail = (message: string) => () => settle?.reject(authFailure(message));
  const timer = setTimeout(
    fail(
      'No answer came from the browser in time. Run `troupe gmail auth` again and open the URL it prints.',
    ),
    options.timeoutMs ?? 5 * 60_000,
  );
  const onAbort = fail('Stopped before Google answered; nothing was saved. Run `troupe gmail auth` again.');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}${CALLBACK_PATH}`;
    const consent = await prepareConsent(options, redirectUri, state, tokenUrl);
    receive = callbackHandler({
      ...consent,
      state,
      tokenUrl,
      log: options.logger ?? silentLogger(),
      granted: (grant) => settle?.resolve(grant),
    });
    options.onUrl(consent.url, redirectUri);
    if (options.signal?.aborted) onAbort();
    return await done;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** The OAuth client for the loopback redirect, the consent page's URL and its PKCE verifier. */
async function prepareConsent(
  options: InstalledAppFlowOptions,
  redirectUri: string,
  state: string,
  tokenUrl: string,
): Promise<{ oauth: OAuth2Client; url: string; codeVerifier: string }> {
  const oauth = new OAuth2Client({
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    redirectUri,
    endpoints: { oauth2TokenUrl: tokenUrl, oauth2AuthBaseUrl: options.authUrl ?? GOOGLE_AUTH_URL },
  });
  const pkce = await oauth.generateCodeVerifierAsync();
  const url = oauth.generateAuthUrl({
    access_type: 'offline',
    prompt: 'consent',
    scope: [...GMAIL_SCOPES],
    state,
    code_challenge: pkce.codeChallenge ?? '',
    code_challenge_method: CodeChallengeMethod.S256,
  });
  return { oauth, url, codeVerifier: pkce.codeVerifier };
}

/**
 * Answers the browser coming back: a forged or stale state is refused and the wait goes on; the
 * first answer with the right state ends it, granted (`granted`) or by throwing why not.
 */
function callbackHandler(context: {
  oauth: OAuth2Client;
  codeVerifier: string;
  state: string;
  tokenUrl: string;
  log: Logger;
  granted: (grant: InstalledAppGrant) => void;
}): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  let answered = false;
  return async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== CALLBACK_PATH) return page(response, 404, 'Not found.');
    if (url.searchParams.get('state') !== context.state) {
      context.log.warn('refused a sign-in answer whose state is not the one sent');
      return page(
        response,
        400,
        'Troupe refused this answer: it is not the sign-in Troupe asked for (the state does not match). Open the URL `troupe gmail auth` printed.',
      );
    }
    if (answered) return page(response, 409, 'Troupe already has this answer.');
    answered = true;
    const declined = url.searchParams.get('error');
    const code = url.searchParams.get('code');
    if (declined || !code) {
      await page(response, 400, 'Troupe was not authorised. You can close this tab.');
      throw authFailure(
        `Google did not authorise Troupe (${declined ?? 'no code in the answer'}). Run \`troupe gmail auth\` again and allow access to Gmail and Calendar.`,
      );
    }
    try {
      const grant = await exchange(context.oauth, code, context.codeVerifier, context.tokenUrl);
      await page(response, 200, 'Troupe is authorised. You can close this tab and go back to the terminal.');
      context.granted(grant);
    } catch (error) {
      await page(
        response,
        400,
        'Troupe could not finish signing in; the terminal says why. You can close this tab.',
      );
      throw error;
    }
  };
}

/** Exchanges the code for tokens; a grant without a refresh token or a scope is refused. */
async function exchange(
  oauth: OAuth2Client,
  code: string,
  codeVerifier: string,
  tokenUrl: string,
): Promise<InstalledAppGrant> {
  let tokens: Credentials;
  try {
    tokens = (await oauth.getToken({ code, codeVerifier })).tokens;
  } catch (error) {
    const failure = readGoogleFailure(error, tokenUrl);
    // A refusal (a used or wrong code) is the person's to redo; Google away is retryable.
    if (failure?.status !== undefined && failure.status < 500)
      throw authFailure(
        `Google refused the sign-in code (${failure.message}). Run \`troupe gmail auth\` again.`,
      );
    throw googleError(error, 'exchange the sign-in code for a token', tokenUrl);
  }
  if (!tokens.refresh_token)
    throw authFailure(
      'Google gave no refresh token. Remove Troupe from https://myaccount.google.com/permissions, then run `troupe gmail auth` again.',
    );
  const granted = new Set((tokens.scope ?? '').split(/\s+/u).filter(Boolean));
  const missing = tokens.scope ? GMAIL_SCOPES.filter((s) => !granted.has(s)) : [];
  if (missing.length > 0)
    throw authFailure(
      `Google granted Troupe only part of what it needs (missing: ${missing.join(', ')}). Run \`troupe gmail auth\` again and tick every box on the consent page.`,
    );
  return { refreshToken: tokens.refresh_token, ...(tokens.scope ? { scope: tokens.scope } : {}) };
}
