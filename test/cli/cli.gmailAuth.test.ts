import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeGoogle, startFakeGoogle } from '../support/fakeGoogle.js';
import { runTroupe } from '../support/runTroupe.js';

const CLIENT_ID = 'client-7.apps.googleusercontent.com';
const CLIENT_SECRET = 'CLIENTSECRET-a77';
const NEW_REFRESH_TOKEN = 'REFRESHTOKEN-a77-new';
const SCOPES =
  'https://www.googleapis.com/auth/gmail.modify https://www.googleapis.com/auth/calendar.events https://www.googleapis.com/auth/calendar.freebusy';

let fake: FakeGoogle;
let dataDir: string;
let env: Record<string, string>;
beforeEach(async () => {
  fake = await startFakeGoogle({ address: 'sam@acme.dev' });
  dataDir = await mkdtemp(join(tmpdir(), 'troupe-gmail-auth-'));
  env = {
    TROUPE_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    GOOGLE_CLIENT_ID: CLIENT_ID,
    GOOGLE_CLIENT_SECRET: CLIENT_SECRET,
    GOOGLE_TOKEN_URL: fake.tokenUrl,
  };
});
afterEach(async () => {
  await fake.close();
});

/** What the browser saw: a forged answer first, then Google's own. */
interface BrowserVisit {
  consent: URL;
  forged: { status: number; text: string; tokenRequestsAfter: number };
  real: { status: number; text: string };
}

/**
 * Plays the person's browser: reads the consent URL the command printed, has the fake's consent
 * page issue a code for it, then comes back to the loopback address: once with a forged state,
 * once with the state Troupe sent.
 */
async function playBrowser(consent: URL, answer: 'allow' | 'deny' = 'allow'): Promise<BrowserVisit> {
  const query = consent.searchParams;
  const redirect = new URL(query.get('redirect_uri') ?? '');
  fake.authorizeCode({
    code: 'CODE-1',
    clientId: query.get('client_id') ?? '',
    redirectUri: redirect.href,
    codeChallenge: query.get('code_challenge') ?? '',
    refreshToken: NEW_REFRESH_TOKEN,
    scope: SCOPES,
  });
  const forged = await fetch(`${redirect.href}?code=CODE-1&state=forged-state`);
  const forgedText = await forged.text();
  const tokenRequestsAfter = fake.requests.filter((r) => r.path === '/token').length;
  const state = query.get('state') ?? '';
  const real = await fetch(
    answer === 'allow'
      ? `${redirect.href}?code=CODE-1&state=${encodeURIComponent(state)}`
      : `${redirect.href}?error=access_denied&state=${encodeURIComponent(state)}`,
  );
  return {
    consent,
    forged: { status: forged.status, text: forgedText, tokenRequestsAfter },
    real: { status: real.status, text: await real.text() },
  };
}

/** Runs `troupe gmail auth`, the browser played as soon as the consent URL is printed. */
async function authorise(answer: 'allow' | 'deny' = 'allow') {
  let visit: Promise<BrowserVisit> | undefined;
  const run = await runTroupe(['gmail', 'auth'], env, {
    onStdout: (text) => {
      const url = /https:\/\/accounts\.google\.com\/\S+/u.exec(text)?.[0];
      if (url && !visit) visit = playBrowser(new URL(url), answer);
    },
  });
  if (!visit) throw new Error(`no consent URL printed:\n${run.stdout}\n${run.stderr}`);
  return { run, visit: await visit };
}

describe('troupe gmail auth (the installed-app flow against the fake token endpoint)', () => {
  it('prints the consent URL, refuses a forged answer, saves the refresh token 0600, and troupe email then uses it', async () => {
    const { run, visit } = await authorise();
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);

    const query = visit.consent.searchParams;
    expect(query.get('access_type')).toBe('offline');
    expect(query.get('prompt')).toBe('consent');
    expect(query.get('response_type')).toBe('code');
    expect(query.get('client_id')).toBe(CLIENT_ID);
    expect(query.get('scope')?.split(' ')).toEqual(SCOPES.split(' '));
    expect(query.get('code_challenge_method')).toBe('S256');
    expect(query.get('state')).toMatch(/^[\w-]{43}$/u);
    const redirect = new URL(query.get('redirect_uri') ?? '');
    expect(redirect.hostname).toBe('127.0.0.1');
    expect(Number(redirect.port)).toBeGreaterThan(0);

    // The forged answer is refused, and nothing is exchanged for it.
    expect(visit.forged.status).toBe(400);
    expect(visit.forged.text).toContain('the state does not match');
    expect(visit.forged.tokenRequestsAfter).toBe(0);
    expect(visit.real.status).toBe(200);
    const exchange = fake.requests.find((r) => r.path === '/token');
    expect(exchange?.body).toMatchObject({
      grant_type: 'authorization_code',
      code: 'CODE-1',
      redirect_uri: redirect.href,
    });

    const path = join(dataDir, 'gmail-token.json');
    expect(run.stdout).toContain(`The refresh token is saved in ${path}`);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({
      type: 'authorized_user',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      refresh_token: NEW_REFRESH_TOKEN,
      scope: SCOPES,
    });
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/REFRESHTOKEN|CLIENTSECRET/u);

    // No Google variable but the API's address: troupe email reads the saved token.
    fake.addEmail({ id: 'n1', from: 'newsletter@bytes.example', subject: 'News', text: 'x' });
    const email = await runTroupe(['email'], {
      TROUPE_DATA_DIR: dataDir,
      LOG_LEVEL: 'silent',
      TROUPE_EMAIL_NOW: '2026-11-25T09:00:00Z',
      GOOGLE_API_URL: fake.url,
      GOOGLE_TOKEN_URL: fake.tokenUrl,
    });
    expect(email.stderr).toBe('');
    expect(email.stdout).toMatch(/^Email assistant — Gmail sam@acme\.dev/mu);
    expect(email.stdout).toContain('n1 “News”');
    const refresh = fake.requests.filter(
      (r) => r.path === '/token' && (r.body as { grant_type?: string }).grant_type === 'refresh_token',
    );
    expect(refresh.map((r) => (r.body as { refresh_token?: string }).refresh_token)).toEqual([
      NEW_REFRESH_TOKEN,
    ]);
    // The refreshed access token was written back into the same file, still 0600.
    expect(JSON.parse(await readFile(path, 'utf8')).access_token).toMatch(/^ya29\.fake-/u);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('a declined consent is TROUPE_GMAIL_AUTH and saves nothing', async () => {
    const { run, visit } = await authorise('deny');
    expect(visit.real.status).toBe(400);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^error TROUPE_GMAIL_AUTH: Google did not authorise Troupe \(access_denied\)/u,
    );
    await expect(stat(join(dataDir, 'gmail-token.json'))).rejects.toThrow();
  });

  it('Ctrl-C while it waits for the browser stops it, saving nothing', async () => {
    const run = await runTroupe(['gmail', 'auth'], env, { stopWhen: /Waiting for Google/u });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^error TROUPE_GMAIL_AUTH: Stopped before Google answered; nothing was saved/u,
    );
    await expect(stat(join(dataDir, 'gmail-token.json'))).rejects.toThrow();
  });

  it('without the OAuth client it says which variable to set, and waits for nothing', async () => {
    const run = await runTroupe(['gmail', 'auth'], { ...env, GOOGLE_CLIENT_SECRET: '' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error TROUPE_CONFIG_INVALID: Set GOOGLE_CLIENT_SECRET: the OAuth client/u);
    expect(run.stdout).toBe('');
  });
});
