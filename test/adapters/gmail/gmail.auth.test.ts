import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readGmailCredentials } from '../../../src/adapters/gmail/gmailAuth.js';
import { pollGmail } from '../../../src/adapters/gmail/gmailPoller.js';
import { gmailConfigured, gmailSettingsFromEnv } from '../../../src/adapters/gmail/gmailSettings.js';
import { createMemoryStore } from '../../../src/adapters/store/memory/memoryStore.js';
import { ConfigError } from '../../../src/config/configError.js';
import { createLogger } from '../../../src/logging/logger.js';
import { TroupeError } from '../../../src/ports/troupeError.js';
import { type FakeGoogle, startFakeGoogle } from '../../support/fakeGoogle.js';
import { openTestAccount, TEST_CREDENTIALS } from '../../support/gmailTestAccount.js';

let fake: FakeGoogle;
beforeEach(async () => {
  fake = await startFakeGoogle();
});
afterEach(async () => {
  await fake.close();
});

async function rejection(promise: Promise<unknown>): Promise<TroupeError> {
  try {
    await promise;
  } catch (error) {
    if (TroupeError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('Gmail settings', () => {
  it('names every bad variable at once, and never quotes a secret', () => {
    let error: unknown;
    try {
      gmailSettingsFromEnv({
        GOOGLE_CLIENT_SECRET: 'has space s3cr3t-77',
        GOOGLE_REFRESH_TOKEN: 'bad token',
        TROUPE_GMAIL_POLL_SECONDS: '2',
        GOOGLE_API_URL: 'ftp://nope',
      });
    } catch (e) {
      error = e;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    const config = error as ConfigError;
    expect(config.problems.map((p) => p.variable)).toEqual([
      'GOOGLE_CLIENT_SECRET',
      'GOOGLE_REFRESH_TOKEN',
      'TROUPE_GMAIL_POLL_SECONDS',
      'GOOGLE_API_URL',
    ]);
    expect(config.message).not.toContain('s3cr3t-77');
    expect(config.message).not.toContain('bad token');
  });

  it('TROUPE_GMAIL_MARK_READ is answered by default, takes never or always, and refuses anything else', () => {
    expect(gmailSettingsFromEnv({}).markRead).toBe('answered');
    expect(gmailSettingsFromEnv({ TROUPE_GMAIL_MARK_READ: ' Never ' }).markRead).toBe('never');
    expect(gmailSettingsFromEnv({ TROUPE_GMAIL_MARK_READ: 'always' }).markRead).toBe('always');
    let error: unknown;
    try {
      gmailSettingsFromEnv({ TROUPE_GMAIL_MARK_READ: 'sometimes' });
    } catch (e) {
      error = e;
    }
    expect(ConfigError.isInstance(error) && error.code).toBe('TROUPE_CONFIG_INVALID');
    expect((error as ConfigError).message).toContain('TROUPE_GMAIL_MARK_READ="sometimes"');
    expect((error as ConfigError).message).toContain('one of answered, never, always');
  });

  it('missing credentials are named together, after the token file is read', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'troupe-gmail-'));
    const error = await rejection(
      readGmailCredentials(gmailSettingsFromEnv({ GOOGLE_CLIENT_ID: 'id', TROUPE_DATA_DIR: empty })),
    );
    expect((error as ConfigError).problems.map((p) => p.variable)).toEqual([
      'GOOGLE_CLIENT_SECRET',
      'GOOGLE_REFRESH_TOKEN',
    ]);
  });

  it('the environment wins over TROUPE_GMAIL_TOKEN_FILE, which wins over the token `troupe gmail auth` saved', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'troupe-gmail-'));
    expect(gmailConfigured({ TROUPE_DATA_DIR: dataDir })).toBe(false);
    await writeFile(
      join(dataDir, 'gmail-token.json'),
      JSON.stringify({
        type: 'authorized_user',
        client_id: 'saved-id',
        client_secret: 'saved-cs',
        refresh_token: 'saved-rt',
      }),
    );
    expect(gmailConfigured({ TROUPE_DATA_DIR: dataDir })).toBe(true);
    const read = (env: Record<string, string>) =>
      readGmailCredentials(gmailSettingsFromEnv({ TROUPE_DATA_DIR: dataDir, ...env }));
    expect(await read({})).toMatchObject({
      clientId: 'saved-id',
      clientSecret: 'saved-cs',
      refreshToken: 'saved-rt',
      tokenFile: join(dataDir, 'gmail-token.json'),
    });
    expect(await read({ GOOGLE_REFRESH_TOKEN: 'env-rt', GOOGLE_CLIENT_ID: 'env-id' })).toMatchObject({
      clientId: 'env-id',
      clientSecret: 'saved-cs',
      refreshToken: 'env-rt',
    });
    const other = join(dataDir, 'other.json');
    await writeFile(
      other,
      JSON.stringify({ client_id: 'o-id', client_secret: 'o-cs', refresh_token: 'o-rt' }),
    );
    expect(await read({ TROUPE_GMAIL_TOKEN_FILE: other })).toMatchObject({
      clientId: 'o-id',
      refreshToken: 'o-rt',
      tokenFile: other,
    });
  });

  it('reads the client and the refresh token from a token file (authorized_user or what google-auth-library writes)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-gmail-'));
    const file = join(dir, 'token.json');
    await writeFile(
      file,
      JSON.stringify({ type: 'authorized_user', client_id: 'cid', client_secret: 'cs', refresh_token: 'rt' }),
    );
    const credentials = await readGmailCredentials(gmailSettingsFromEnv({ TROUPE_GMAIL_TOKEN_FILE: file }));
    expect(credentials).toMatchObject({
      clientId: 'cid',
      clientSecret: 'cs',
      refreshToken: 'rt',
      tokenFile: file,
    });
    await writeFile(file, '{not json');
    const error = await rejection(
      readGmailCredentials(gmailSettingsFromEnv({ TROUPE_GMAIL_TOKEN_FILE: file })),
    );
    expect(error.code).toBe('TROUPE_CONFIG_INVALID');
    expect(error.message).toContain('TROUPE_GMAIL_TOKEN_FILE');
  });
});

describe('Gmail tokens', () => {
  it('an expired access token is refreshed, and the new one is saved to the token file with mode 0600', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-gmail-'));
    const file = join(dir, 'token.json');
    await writeFile(
      file,
      JSON.stringify({
        refresh_token: TEST_CREDENTIALS.refreshToken,
        access_token: 'ya29.expired',
        expiry_date: Date.now() - 60_000,
        scope: 'https://www.googleapis.com/auth/gmail.modify',
      }),
      { mode: 0o644 },
    );
    const credentials = await readGmailCredentials(
      gmailSettingsFromEnv({
        GOOGLE_CLIENT_ID: TEST_CREDENTIALS.clientId,
        GOOGLE_CLIENT_SECRET: TEST_CREDENTIALS.clientSecret,
        TROUPE_GMAIL_TOKEN_FILE: file,
      }),
    );
    const { account } = await openTestAccount(fake, createMemoryStore(), { credentials });
    await account.auth.flush();

    const token = fake.requests.filter((r) => r.path === '/token');
    expect(token).toHaveLength(1);
    expect(token[0]?.body).toMatchObject({
      grant_type: 'refresh_token',
      refresh_token: TEST_CREDENTIALS.refreshToken,
      client_id: TEST_CREDENTIALS.clientId,
    });
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved).toMatchObject({
      refresh_token: TEST_CREDENTIALS.refreshToken,
      access_token: 'ya29.fake-1',
      token_type: 'Bearer',
    });
    expect(saved.expiry_date).toBeGreaterThan(Date.now());
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(fake.requests.find((r) => r.path.endsWith('/profile'))?.headers.authorization).toBe(
      'Bearer ya29.fake-1',
    );
  });

  it('a stored access token still valid is used as it is (no refresh)', async () => {
    fake.acceptAccessToken('ya29.stored');
    await openTestAccount(fake, createMemoryStore(), {
      credentials: { accessToken: 'ya29.stored', expiryDate: Date.now() + 3_600_000 },
    });
    expect(fake.requests.filter((r) => r.path === '/token')).toHaveLength(0);
  });

  it('a revoked refresh token (invalid_grant) is TROUPE_GMAIL_AUTH saying how to get a new one, with no secret in it or in the logs', async () => {
    fake.revokeRefreshToken(TEST_CREDENTIALS.refreshToken);
    let logged = '';
    const logger = createLogger({
      level: 'debug',
      destination: new Writable({
        write(chunk, _encoding, done) {
          logged += String(chunk);
          done();
        },
      }),
    });
    const error = await rejection(openTestAccount(fake, createMemoryStore(), { logger }));
    expect(error.code).toBe('TROUPE_GMAIL_AUTH');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('invalid_grant');
    expect(error.message).toContain('run `troupe gmail auth`');
    expect(error.message).toContain('GOOGLE_REFRESH_TOKEN');
    expect(error.details?.reason).toBe('invalid_grant');
    logger.error({ err: error }, 'as the poller logs it');
    const everything = `${error.message}\n${String(error.cause)}\n${JSON.stringify(error)}\n${logged}`;
    expect(everything).not.toContain(TEST_CREDENTIALS.refreshToken);
    expect(everything).not.toContain(TEST_CREDENTIALS.clientSecret);
  });

  it('OAuth token fields are redacted from every log line, whatever object holds them', () => {
    let logged = '';
    const logger = createLogger({
      level: 'info',
      destination: new Writable({
        write(chunk, _encoding, done) {
          logged += String(chunk);
          done();
        },
      }),
    });
    logger.info(
      {
        tokens: { refresh_token: 'RT-9f1', access_token: 'AT-9f2' },
        client_secret: 'CS-9f3',
        credentials: { clientSecret: 'CS-9f4', refreshToken: 'RT-9f5', accessToken: 'AT-9f6' },
      },
      'tokens',
    );
    expect(logged).toContain('[redacted]');
    expect(logged).not.toMatch(/9f[1-6]/u);
  });

  it('a 401 that a refresh does not cure is TROUPE_GMAIL_AUTH', async () => {
    fake.refuseAccessTokens();
    const error = await rejection(openTestAccount(fake, createMemoryStore()));
    expect(error.code).toBe('TROUPE_GMAIL_AUTH');
    // Refreshed before the first call and once more after the 401, then given up.
    expect(fake.requests.filter((r) => r.path === '/token')).toHaveLength(2);
  });
});

describe('Gmail retries', () => {
  it('a 429 is retried after the Retry-After Gmail gave (seconds, or an HTTP date)', async () => {
    fake.inject({ path: /\/profile$/u, status: 429, headers: { 'retry-after': '7' } });
    const { account, waits } = await openTestAccount(fake, createMemoryStore());
    expect(waits).toEqual([7_000]);
    expect(fake.calls().filter((c) => c.endsWith('/profile'))).toHaveLength(2);

    const inTwelveSeconds = new Date(Date.now() + 12_000).toUTCString();
    fake.inject({ path: /\/freeBusy$/u, status: 503, headers: { 'retry-after': inTwelveSeconds } });
    await account.calendar.availability('2026-11-26', 'UTC');
    expect(waits[1]).toBeGreaterThan(9_000);
    expect(waits[1]).toBeLessThanOrEqual(12_000);
  });

  it('a Retry-After date is measured on the injected clock; one longer than the longest wait fails at once, retryable', async () => {
    const now = Date.parse('2026-11-25T09:00:00Z');
    const { account, waits } = await openTestAccount(fake, createMemoryStore(), { retryNow: () => now });
    fake.inject({
      path: /\/freeBusy$/u,
      status: 503,
      headers: { 'retry-after': 'Wed, 25 Nov 2026 09:00:30 GMT' },
    });
    await account.calendar.availability('2026-11-26', 'UTC');
    expect(waits).toEqual([30_000]);

    fake.inject({ path: /\/freeBusy$/u, status: 429, headers: { 'retry-after': '3600' } });
    const error = await rejection(account.calendar.availability('2026-11-26', 'UTC'));
    expect(error.code).toBe('TROUPE_GMAIL_UNAVAILABLE');
    expect(error.retryable).toBe(true);
    expect(waits).toEqual([30_000]); // not waited for
  });

  it('5xx without Retry-After backs off 1 s, 2 s, …; Gmail’s 403 rate limit counts too; still failing: TROUPE_GMAIL_UNAVAILABLE', async () => {
    fake.addEmail({ from: 'a@acme.dev', subject: 'A', text: 'a' });
    const { account, waits } = await openTestAccount(fake, createMemoryStore());
    fake.inject({ path: /\/messages$/u, status: 503, times: 1 });
    // Twice: google-auth-library answers the first 403 with a token refresh and one retry of its own.
    fake.inject({
      path: /\/messages$/u,
      status: 403,
      times: 2,
      body: {
        error: {
          code: 403,
          message: 'User Rate Limit Exceeded',
          errors: [{ reason: 'userRateLimitExceeded' }],
        },
      },
    });
    await account.ingest.poll(async () => {});
    expect(waits).toEqual([1_000, 2_000]);

    fake.inject({ path: /\/history$/u, status: 500, times: 10 });
    const error = await rejection(account.ingest.poll(async () => {}));
    expect(error.code).toBe('TROUPE_GMAIL_UNAVAILABLE');
    expect(error.retryable).toBe(true);
    expect(waits.slice(2)).toEqual([1_000, 2_000, 4_000, 8_000]);
  });

  it('a refusal that retrying cannot cure (400) fails at once as TROUPE_GMAIL_FAILED', async () => {
    const { account, waits } = await openTestAccount(fake, createMemoryStore());
    fake.inject({
      path: /\/freeBusy$/u,
      status: 400,
      body: { error: { code: 400, message: 'Bad Request' } },
    });
    const error = await rejection(account.calendar.availability('2026-11-26', 'UTC'));
    expect(error.code).toBe('TROUPE_GMAIL_FAILED');
    expect(waits).toEqual([]);
  });
});

describe('Gmail polling', () => {
  it('a revoked token stops only that mailbox’s polling; another mailbox goes on', async () => {
    const other = await startFakeGoogle({ address: 'team@example.com' });
    try {
      const store = createMemoryStore();
      const mine = await openTestAccount(fake, store);
      const theirs = await openTestAccount(other, store, { credentials: { refreshToken: 'REFRESHTOKEN-2' } });
      const got: string[] = [];
      const controller = new AbortController();
      let theirPasses = 0;
      // Simulated waits: each resolves at once; after mine stopped, theirs runs 3 more passes.
      const sleep = async () => {};
      fake.addEmail({ id: 'mine-1', from: 'a@acme.dev', subject: 'mine', text: 'x' });
      const myLoop = pollGmail({
        ingest: mine.account.ingest,
        onMessage: async (input) => {
          got.push(input.id);
          // Revoked after the first email: the next refresh is refused.
          fake.revokeRefreshToken(TEST_CREDENTIALS.refreshToken);
          fake.refuseAccessTokens();
        },
        everySeconds: 60,
        signal: controller.signal,
        sleep,
      });
      const end = await myLoop;
      expect(end.stopped).toBe('auth');
      expect(end.stopped === 'auth' && end.error.code).toBe('TROUPE_GMAIL_AUTH');

      other.addEmail({ id: 'theirs-1', from: 'b@acme.dev', subject: 'theirs', text: 'y' });
      const theirLoop = pollGmail({
        ingest: theirs.account.ingest,
        onMessage: async (input) => void got.push(input.id),
        everySeconds: 60,
        signal: controller.signal,
        sleep,
        onPass: () => {
          theirPasses += 1;
          if (theirPasses === 1)
            other.addEmail({ id: 'theirs-2', from: 'c@acme.dev', subject: 'more', text: 'z' });
          if (theirPasses === 3) controller.abort();
        },
      });
      expect(await theirLoop).toEqual({ stopped: 'signal' });
      expect(got).toEqual(['mine-1', 'theirs-1', 'theirs-2']);
    } finally {
      await other.close();
    }
  });

  it('a passing failure is logged and the next pass tries again', async () => {
    const { account } = await openTestAccount(fake, createMemoryStore());
    fake.inject({ path: /\/profile$/u, status: 400, times: 1 });
    let passes = 0;
    const controller = new AbortController();
    const waits: number[] = [];
    const end = await pollGmail({
      ingest: account.ingest,
      onMessage: async () => {},
      everySeconds: 30,
      signal: controller.signal,
      sleep: async (ms) => {
        waits.push(ms);
      },
      onPass: () => {
        passes += 1;
        controller.abort();
      },
    });
    expect(end).toEqual({ stopped: 'signal' });
    expect(passes).toBe(1); // the first pass failed, the second went through
    expect(waits).toEqual([30_000]);
  });
});
