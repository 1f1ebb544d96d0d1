/**
 * Secrets never leave: the CLI's commands run with a secret in every variable the docs list as
 * one (API keys, and passwords inside the model, MongoDB and ERP URLs), at debug log level, with
 * the model failing, the ERP unreachable and bad values, and no byte of any secret appears on
 * stdout or stderr.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGoogle, startFakeGoogle } from '../support/fakeGoogle.js';
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../support/fakeOpenAiServer.js';

const SECRETS = {
  modelKey: 'sk-MODELKEY-7f3a9c',
  openAiKey: 'sk-OPENAIKEY-51e2',
  anthropicKey: 'sk-ant-ANTHROPICKEY-88d0',
  urlPassword: 'URLPASSWORD-c0ffee',
  mongoPassword: 'MONGOPASSWORD-beef',
  erpPassword: 'ERPPASSWORD-f00d',
  googleClientSecret: 'GOOGLECLIENTSECRET-a11c',
  googleRefreshToken: 'GOOGLEREFRESHTOKEN-b0b',
};
const leaked = (output: string) => Object.values(SECRETS).filter((secret) => output.includes(secret));

let fake: FakeOpenAiServer;
beforeAll(async () => {
  // No scripted replies: every model call is answered with an HTTP error.
  fake = await startFakeOpenAiServer();
});
afterAll(async () => {
  await fake?.close();
});

/** Everything a secret can be put in, per the README's configuration table. */
function secretEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(TROUPE_|OPENAI_|ANTHROPIC_|MONGODB_|ERP_|GOOGLE_|LOG_LEVEL$|FORCE_COLOR$)/u.test(key)) continue;
    env[key] = value;
  }
  return {
    ...env,
    NO_COLOR: '1',
    LOG_LEVEL: 'debug',
    TROUPE_DATA_DIR: mkdtempSync(join(tmpdir(), 'troupe-secrets-')),
    TROUPE_MODEL_PROVIDER: 'openai-compatible',
    TROUPE_MODEL: 'fake-model',
    TROUPE_MODEL_BASE_URL: fake.baseUrl,
    TROUPE_MODEL_API_KEY: SECRETS.modelKey,
    TROUPE_MODEL_TIMEOUT: '2s',
    TROUPE_MODEL_RETRIES: '0',
    OPENAI_API_KEY: SECRETS.openAiKey,
    ANTHROPIC_API_KEY: SECRETS.anthropicKey,
    // Nothing listens on port 1: the lookup's connection fails and is reported.
    ERP_DATABASE_URL: `postgres://erp:${SECRETS.erpPassword}@127.0.0.1:1/erp`,
    ERP_STATEMENT_TIMEOUT_MS: '1000',
    ...extra,
  };
}

/** Runs a CLI command to its end, feeding `lines` one at a time after `ready` is printed. */
async function run(
  args: string[],
  env: Record<string, string>,
  script: { ready?: RegExp; lines?: { text: string; expect: RegExp }[] } = {},
): Promise<{ code: number | null; output: string }> {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', ...args],
    { env, stdio: 'pipe' },
  );
  let stdout = '';
  let stderr = '';
  const waiting: (() => void)[] = [];
  const wake = () => {
    for (const w of waiting.splice(0)) w();
  };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    wake();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  void exited.then(wake);
  // Waits on the output, with no wall-clock deadline (the test's timeout guards a hang).
  const waitFor = async (pattern: RegExp, from: number) => {
    while (!pattern.test(stdout.slice(from))) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`no ${pattern} in stdout:\n${stdout}\nstderr:\n${stderr}`);
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  };
  try {
    if (script.ready) await waitFor(script.ready, 0);
    for (const line of script.lines ?? []) {
      const from = stdout.length;
      child.stdin.write(`${line.text}\n`);
      await waitFor(line.expect, from);
    }
    child.stdin.end();
    const code = await exited;
    return { code, output: `${stdout}\n${stderr}` };
  } finally {
    if (child.exitCode === null) child.kill();
  }
}

describe('secrets in every variable the docs list', () => {
  it('troupe chat: a failing model is reported without a secret', async () => {
    const { code, output } = await run(['chat', '--avatars', 'examples/chat/avatars.yaml'], secretEnv(), {
      ready: /\/help lists the commands/,
      lines: [
        { text: 'Dewey, hi there', expect: /\[\d+\] .*Dewey \(error reply\)/ },
        { text: '/who', expect: /Dewey/ },
        { text: '/quit', expect: /Bye/ },
      ],
    });
    expect(code).toBe(0);
    expect(fake.requests.length).toBeGreaterThan(0);
    // The failure was logged with its cause (the path where a URL's password used to leak).
    expect(output).toContain('TROUPE_MODEL_FAILED');
    expect(output).toContain('caused by');
    expect(leaked(output)).toEqual([]);
  });

  it('troupe chat: an unreachable ERP is reported without its password', async () => {
    const offline = secretEnv();
    for (const key of ['TROUPE_MODEL_PROVIDER', 'TROUPE_MODEL', 'TROUPE_MODEL_BASE_URL']) delete offline[key];
    offline.TROUPE_MODEL_PROVIDER = 'offline';
    const { code, output } = await run(['chat', '--avatars', 'examples/chat/avatars.yaml'], offline, {
      ready: /\/help lists the commands/,
      lines: [
        { text: 'Dewey, look up vendor Acme Parts', expect: /DATABASE_ERROR/ },
        { text: '/quit', expect: /Bye/ },
      ],
    });
    expect(code).toBe(0);
    expect(output).toContain('ECONNREFUSED');
    expect(leaked(output)).toEqual([]);
  });

  it('a model URL with a password in it is refused, and the error shows it masked', async () => {
    const { code, output } = await run(
      ['chat'],
      secretEnv({ TROUPE_MODEL_BASE_URL: `http://user:${SECRETS.urlPassword}@127.0.0.1:9/v1` }),
    );
    expect(code).toBe(2);
    expect(output).toContain('TROUPE_MODEL_BASE_URL="http://***@127.0.0.1:9/v1"');
    expect(output).toContain('TROUPE_MODEL_API_KEY');
    expect(leaked(output)).toEqual([]);
  });

  it('invalid values of secret variables are named, never echoed', async () => {
    const { code, output } = await run(
      ['chat'],
      secretEnv({
        TROUPE_MODEL_BASE_URL: `ftp://user:${SECRETS.urlPassword}@host/v1`,
        ERP_DATABASE_URL: `mysql://erp:${SECRETS.erpPassword}@host/erp`,
      }),
    );
    expect(code).toBe(2);
    expect(output).toContain('TROUPE_MODEL_BASE_URL');
    expect(leaked(output)).toEqual([]);
  });

  it('an unreachable MongoDB is reported with its host, not its password', async () => {
    const { code, output } = await run(
      ['chat'],
      secretEnv({ MONGODB_URI: `mongodb://admin:${SECRETS.mongoPassword}@127.0.0.1:1/troupe` }),
    );
    expect(code).not.toBe(0);
    expect(output).toContain('127.0.0.1:1');
    expect(leaked(output)).toEqual([]);
  });

  it('troupe tour and troupe simulate print no secret', async () => {
    for (const args of [['tour'], ['simulate', 'examples/tour.yaml', '--verbose']]) {
      const { code, output } = await run(args, secretEnv());
      expect(code, output).toBe(0);
      expect(leaked(output)).toEqual([]);
    }
  });

  it('troupe email on Gmail: Google’s 5xx retried, then a revoked refresh token, at debug level, print no secret', async () => {
    const google: FakeGoogle = await startFakeGoogle();
    try {
      const env = secretEnv({
        GOOGLE_CLIENT_ID: 'client-1.apps.googleusercontent.com',
        GOOGLE_CLIENT_SECRET: SECRETS.googleClientSecret,
        GOOGLE_REFRESH_TOKEN: SECRETS.googleRefreshToken,
        GOOGLE_API_URL: google.url,
        GOOGLE_TOKEN_URL: google.tokenUrl,
      });
      for (const key of ['TROUPE_MODEL_PROVIDER', 'TROUPE_MODEL', 'TROUPE_MODEL_BASE_URL']) delete env[key];
      env.TROUPE_MODEL_PROVIDER = 'offline';
      google.addEmail({ from: 'newsletter@bytes.example', subject: 'News', text: 'x' });
      google.inject({ path: /\/messages$/u, status: 503, headers: { 'retry-after': '0' } });
      const working = await run(['email'], env);
      expect(working.code, working.output).toBe(0);
      expect(working.output).toContain('Google asked to wait; retrying');
      expect(leaked(working.output)).toEqual([]);

      google.revokeRefreshToken(SECRETS.googleRefreshToken);
      const revoked = await run(['email'], env);
      expect(revoked.code).toBe(2);
      expect(revoked.output).toContain('TROUPE_GMAIL_AUTH');
      expect(leaked(revoked.output)).toEqual([]);
    } finally {
      await google.close();
    }
  });
});
