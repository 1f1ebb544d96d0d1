/**
 * `troupe studio` attached to the store every command reads: the inbox it serves is the one
 * `troupe inbox list` shows on the same SQLite directory, an answer given through the studio is
 * stored and seen by `troupe inbox list`, and one given by `troupe inbox answer` is seen by the
 * studio (of two answers to one interrupt, one wins).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createUsageLedger } from '../../src/actors/usage/storedUsageLedger.js';
import { openDefaultStore } from '../../src/adapters/store/storeFromEnv.js';
import { loadAvatarsFile } from '../../src/cli/avatarsFile.js';
import { runEmail, runInboxAnswer, runInboxList } from '../../src/cli/email.js';
import { type CliIo, runCli } from '../../src/cli/program.js';
import { builtInModelPrices } from '../../src/config/modelPrices.js';
import { createRuntime } from '../../src/createRuntime.js';
import { silentLogger } from '../../src/logging/logger.js';

const quiet = { stdout: () => {}, stderr: () => {} };

/** `troupe studio <args>` in-process, until its URL is printed. */
async function startStudio(args: string[], env: Record<string, string>) {
  let stdout = '';
  let stderr = '';
  let stop: (signal: string) => void = () => {};
  let printed: () => void = () => {};
  const urlPrinted = new Promise<void>((resolve) => {
    printed = resolve;
  });
  const io: CliIo = {
    stdout: (t) => {
      stdout += t;
      if (/Ctrl-C/u.test(stdout)) printed();
    },
    stderr: (t) => {
      stderr += t;
      printed();
    },
    env: { LOG_LEVEL: 'silent', ...env },
    isTTY: false,
    stopSignal: () => new Promise<string>((resolve) => (stop = resolve)),
  };
  const exit = runCli(['studio', ...args], io);
  await urlPrinted;
  const match = /Troupe Studio: (http:\/\/127\.0\.0\.1:\d+\/)#token=([\w-]+)/u.exec(stdout);
  if (!match) throw new Error(`no URL printed: ${stdout}${stderr}`);
  const [, base = '', token = ''] = match;
  const api = async (path: string, body?: unknown) => {
    const response = await fetch(`${base}api/${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  return { exit, stdout: () => stdout, stop: (s: string) => stop(s), api };
}

async function listed(env: Record<string, string>): Promise<string[]> {
  let out = '';
  expect(await runInboxList({ ...quiet, stdout: (t) => (out += t), json: true, env })).toBe(0);
  return (JSON.parse(out) as { id: string }[]).map((item) => item.id);
}

describe('troupe studio on the store', () => {
  it('serves the inbox `troupe inbox list` shows; answers cross both ways, and of two one wins', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-studio-store-'));
    const env = { LOG_LEVEL: 'silent', TROUPE_STORE: 'memory', TROUPE_EMAIL_NOW: '2026-11-25T09:00:00Z' };
    const onDir = { ...env, TROUPE_STORE: 'sqlite', TROUPE_DATA_DIR: dir };
    expect(await runEmail({ ...quiet, env: onDir, mailboxFile: 'examples/email/sample-mailbox.jsonl' })).toBe(
      0,
    );
    const waiting = await listed(onDir);
    expect(waiting.length).toBeGreaterThan(2);

    // --store names the directory; the environment names another store (memory) and is overridden.
    const studio = await startStudio(['--port', '0', '--store', dir], env);
    expect(studio.stdout()).toContain(`Store: SQLite in ${dir}`);
    expect(studio.stdout()).toContain(`Inbox: ${waiting.length} waiting`);
    const state = async () =>
      (await studio.api('state')).body as {
        interrupts: { id: string }[];
        answered: { interruptId: string; type: string }[];
      };
    expect((await state()).interrupts.map((i) => i.id)).toEqual(waiting);

    // Answered in the studio: stored, so `troupe inbox list` no longer shows it.
    const [first = '', second = ''] = waiting;
    expect((await studio.api(`inbox/${encodeURIComponent(first)}/answer`, { type: 'ignore' })).status).toBe(
      200,
    );
    expect(await listed(onDir)).not.toContain(first);

    // Answered by `troupe inbox answer`: the studio's next read shows it answered, and its own answer loses.
    expect(await runInboxAnswer({ ...quiet, env: onDir, id: second, type: 'ignore' })).toBe(0);
    const after = await state();
    expect(after.interrupts.map((i) => i.id)).not.toContain(second);
    expect(after.answered.map((a) => a.interruptId)).toEqual(expect.arrayContaining([first, second]));
    expect((await studio.api(`inbox/${encodeURIComponent(second)}/answer`, { type: 'ignore' })).status).toBe(
      409,
    );

    // Nothing posts into a channel from here: the playground only watches.
    const post = await studio.api('playground/message', { text: 'hello' });
    expect(post.status).toBe(403);
    expect(post.body).toMatchObject({ error: { code: 'TROUPE_STUDIO_READ_ONLY' } });
    studio.stop('SIGTERM');
    expect(await studio.exit).toBe(0);
  });

  it("shows the stored floors' avatars by name with --avatars (by id without it)", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-studio-floors-'));
    const avatarsFile = join(dir, 'avatars.yaml');
    await writeFile(avatarsFile, 'avatars:\n  - { id: nova, name: Nova, emoji: "🌟" }\n');
    const env = { LOG_LEVEL: 'silent', TROUPE_STORE: 'sqlite', TROUPE_DATA_DIR: dir };
    // A chat that ran on the directory before: Nova was summoned into its channel.
    const store = await openDefaultStore(env);
    const chat = createRuntime({
      avatars: await loadAvatarsFile(avatarsFile),
      store,
      persistence: { durable: true },
      logger: silentLogger(),
      avatarCreation: { enabled: true },
    });
    const summon = chat.send({
      type: 'avatar.summon',
      channel: { kind: 'terminal', id: 'lobby' },
      avatarId: 'nova',
      by: { kind: 'human', id: 'ada', name: 'Ada' },
    });
    expect(summon).toEqual({ accepted: true });
    // …and summoning created Gandalf there: the studio names him from the store, file or not.
    const { avatar } = await chat.createAvatar({ name: 'Gandalf', by: { id: 'ada', name: 'Ada' } });
    chat.send({
      type: 'avatar.summon',
      channel: { kind: 'terminal', id: 'lobby' },
      avatarId: avatar.id,
      by: { id: 'ada', name: 'Ada' },
    });
    await chat.whenIdle();
    await chat.stop();
    await store.close();

    const presences = async (args: string[]) => {
      const studio = await startStudio(['--port', '0', '--store', dir, ...args], env);
      const { body } = await studio.api('state');
      studio.stop('SIGTERM');
      expect(await studio.exit).toBe(0);
      return (body.actors as { kind: string; label: string }[])
        .filter((a) => a.kind === 'presence')
        .map((a) => a.label);
    };
    expect((await presences(['--avatars', avatarsFile])).sort()).toEqual([
      'Gandalf in terminal:lobby',
      'Nova in terminal:lobby',
    ]);
    expect((await presences([])).sort()).toEqual(['Gandalf in terminal:lobby', 'nova in terminal:lobby']);
  });

  it("shows the day's usage other processes store, read again while it runs", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-studio-usage-'));
    const env = { LOG_LEVEL: 'silent', TROUPE_STORE: 'sqlite', TROUPE_DATA_DIR: dir };
    const store = await openDefaultStore(env);
    // Another process (a bot) and its calls, stored through its usage ledger.
    const bot = createUsageLedger({ store: store.documents, prices: builtInModelPrices });
    const call = (outputTokens: number) =>
      bot.record({
        at: Date.now(),
        model: 'openai:gpt-4o-mini',
        spender: { kind: 'avatar', id: 'nova' },
        scope: 'discord:1',
        purpose: 'turn',
        inputTokens: 100,
        outputTokens,
        characters: 40,
      });
    call(10);
    await bot.flush();
    const studio = await startStudio(['--port', '0', '--store', dir], env);
    const usage = async () => {
      const { body } = await studio.api('state');
      return (body.usage as { total: { calls: number; outputTokens: number } }).total;
    };
    expect(await usage()).toMatchObject({ calls: 1, outputTokens: 10 });
    call(20);
    call(30);
    await bot.flush();
    expect(await usage()).toMatchObject({ calls: 3, outputTokens: 60 });
    studio.stop('SIGTERM');
    expect(await studio.exit).toBe(0);
    await store.close();
  });

  /** `troupe studio <args>` that is expected to stop at once: its exit code and what it printed on stderr. */
  async function refused(args: string[], env: Record<string, string> = {}) {
    let stderr = '';
    const io: CliIo = {
      stdout: () => {},
      stderr: (t) => (stderr += t),
      env: { LOG_LEVEL: 'silent', ...env },
      isTTY: false,
      stopSignal: () => new Promise(() => {}),
    };
    const code = await runCli(['studio', '--port', '0', ...args], io);
    return { code, stderr };
  }

  it('refuses --avatars with --demo, and a missing avatars file by its code', async () => {
    const withDemo = await refused(['--demo', '--avatars', '/tmp/x.yaml']);
    expect(withDemo.code).toBe(2);
    expect(withDemo.stderr).toMatch(/TROUPE_CONFIG_INVALID: --avatars names/u);
    const dir = await mkdtemp(join(tmpdir(), 'troupe-studio-noavatars-'));
    const missing = await refused(['--avatars', join(dir, 'none.yaml')], {
      TROUPE_STORE: 'sqlite',
      TROUPE_DATA_DIR: dir,
    });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('TROUPE_AVATARS_NOT_FOUND');
  });

  it('refuses a --store directory that holds no store (a typo), and creates nothing there', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'troupe-studio-typo-'));
    const typo = join(parent, 'trupe');
    const { code, stderr } = await refused(['--store', typo]);
    expect(code).toBe(2);
    expect(stderr).toContain(`TROUPE_CONFIG_INVALID: --store ${typo} holds no Troupe store`);
    expect(existsSync(typo)).toBe(false);
  });

  it('refuses --store with --demo', async () => {
    const { code, stderr } = await refused(['--demo', '--store', '/tmp/x']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/TROUPE_CONFIG_INVALID: --store attaches/u);
  });
});
