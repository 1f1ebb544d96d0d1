import { request } from 'node:http';
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
function startStudio(args: string[]) {
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
    env: { LOG_LEVEL: 'silent' },
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
    const run = startStudio(['--port', '0']);
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
    const bad = startStudio(['--port', 'eighty']);
    expect(await bad.exit).toBe(2);
    expect(bad.stderr).toMatch(/TROUPE_CONFIG_INVALID: --port/u);

    const first = startStudio(['--port', '0']);
    await first.urlPrinted;
    const port = /127\.0\.0\.1:(\d+)/u.exec(first.stdout)?.[1] ?? '';
    const second = startStudio(['--port', port]);
    expect(await second.exit).toBe(2);
    expect(second.stderr).toMatch(/cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\)/u);
    first.stop('SIGINT');
    expect(await first.exit).toBe(0);
  });
});
