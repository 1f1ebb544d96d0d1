import { mkdtemp, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliIo, runCli } from '../../src/cli/program.js';

/** Resolves with the status of a GET (with headers), or rejects when nothing listens. */
function get(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** `troupe studio` in-process: the output so far, a way to stop it, and its exit code. */
function startStudio(args: string[], env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  let stop: (signal: string) => void = () => {};
  let printed: () => void = () => {};
  const urlPrinted = new Promise<void>((resolve) => {
    printed = resolve;
  });
  const stopped = new Promise<string>((resolve) => {
    stop = resolve;
  });
  const io: CliIo = {
    stdout: (t) => {
      stdout += t;
      if (/#token=/u.test(stdout)) printed();
    },
    stderr: (t) => {
      stderr += t;
      printed();
    },
    env: { LOG_LEVEL: 'silent', ...env },
    isTTY: false,
    stopSignal: () => stopped,
  };
  const exit = runCli(['studio', ...args], io);
  return {
    exit,
    urlPrinted,
    stop,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
  };
}

describe('troupe studio', () => {
  it('prints the URL with its token, serves the API with that token only, and stops cleanly on the signal', async () => {
    const run = startStudio(['--demo', '--port', '0']);
    await run.urlPrinted;
    const match = /Troupe Studio: (http:\/\/127\.0\.0\.1:(\d+)\/)#token=([\w-]+)/u.exec(run.stdout);
    expect(match, run.stderr).not.toBeNull();
    const base = match?.[1] ?? '';
    const token = match?.[3] ?? '';
    expect(token.length).toBeGreaterThanOrEqual(43);
    expect(await get(`${base}api/state`, { Authorization: `Bearer ${token}` })).toBe(200);
    expect(await get(`${base}api/state`)).toBe(401);
    run.stop('SIGTERM');
    expect(await run.exit).toBe(0);
    expect(run.stdout).toContain('Studio stopped (SIGTERM).');
    await expect(get(`${base}api/state`, { Authorization: `Bearer ${token}` })).rejects.toThrow(
      /ECONNREFUSED/u,
    );
  });

  it('refuses a port that is not a number, and one that is taken', async () => {
    const bad = startStudio(['--demo', '--port', 'eighty']);
    expect(await bad.exit).toBe(2);
    expect(bad.stderr).toMatch(/TROUPE_CONFIG_INVALID: --port/u);

    const first = startStudio(['--demo', '--port', '0']);
    await first.urlPrinted;
    const port = /127\.0\.0\.1:(\d+)/u.exec(first.stdout)?.[1] ?? '';
    const second = startStudio(['--demo', '--port', port]);
    expect(await second.exit).toBe(2);
    expect(second.stderr).toMatch(/cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\)/u);
    first.stop('SIGINT');
    expect(await first.exit).toBe(0);
  });

  it('--scenario: its avatars write with the model they name, built from the environment; an unknown one stops it at start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-studio-cli-'));
    const file = join(dir, 'playground.yaml');
    const write = (model: string) =>
      writeFile(
        file,
        [
          'name: playground',
          'avatars:',
          `  - { id: luna, name: Luna, present: true, model: "${model}" }`,
          '  - { id: milo, name: Milo, present: true }',
          'script:',
          '  - { wait: 1s }',
        ].join('\n'),
      );
    await write('opneai:gpt-4o');
    const refused = startStudio(['--port', '0', '--scenario', file]);
    expect(await refused.exit).toBe(2);
    expect(refused.stderr).toContain(
      'error TROUPE_AVATAR_MODEL_INVALID: Avatar Luna (luna) has model "opneai:gpt-4o": unknown provider "opneai"',
    );

    await write('cheap');
    const run = startStudio(['--port', '0', '--scenario', file], {
      TROUPE_MODEL_PROFILES:
        '{"cheap":{"provider":"openai-compatible","model":"llama3.2","baseUrl":"http://127.0.0.1:9/v1"}}',
    });
    await run.urlPrinted;
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('Model: offline scripted replies');
    expect(run.stdout).toContain('  Luna: openai-compatible:llama3.2\n');
    expect(run.stdout).not.toContain('Milo:');
    run.stop('SIGTERM');
    expect(await run.exit).toBe(0);
  });
});
