import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type CliIo, runCli } from '../../src/cli/program.js';
import { discordInProcess as inProcess } from '../support/cliInProcess.js';
import { ada, defaultGuild, GENERAL, GUILD, RANDOM } from '../support/discordHarness.js';
import { type FakeDiscord, startFakeDiscord } from '../support/fakeDiscord.js';
import { studioClient } from '../support/studioClient.js';

const fakes: FakeDiscord[] = [];
const children: ChildProcessWithoutNullStreams[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const fake of fakes.splice(0)) await fake.close();
});

async function fakeDiscord(options: Partial<Parameters<typeof startFakeDiscord>[0]> = {}) {
  const fake = await startFakeDiscord({ guilds: [defaultGuild], ...options });
  fakes.push(fake);
  return fake;
}

// The timeout guards a hang (real timers, real sockets): a loaded machine is only slower.
const until = (check: () => boolean | undefined, timeout = 60_000) =>
  vi.waitFor(
    () => {
      if (!check()) throw new Error('not yet');
    },
    { timeout, interval: 10 },
  );

describe('troupe discord', () => {
  it('runs the avatars file on Discord: banner, slash commands in the guild, a summon greets, and a stop exits 0', async () => {
    const fake = await fakeDiscord();
    const run = inProcess(['--guild', GUILD], { DISCORD_TOKEN: fake.token, DISCORD_API_URL: fake.restApi });
    await until(() => run.out().includes('Troupe is on Discord'));
    expect(run.out()).toMatch(/as Troupe in 1 server\(s\) — avatars: 🤖 Dewey, 🔭 Nova, 🦖 Rex, 🌿 Wren/u);
    expect(fake.commands.get(`guild:${GUILD}`)).toHaveLength(5);
    const summon = fake.interact({
      channelId: GENERAL,
      user: ada,
      command: 'summon',
      options: { avatar: 'stargazer' },
    });
    expect((await summon.answered(2))[1]?.content).toContain('Nova is here');
    await until(() => fake.executions.length >= 1);
    expect(fake.executions[0]).toMatchObject({
      username: 'Nova',
      avatarUrl: 'https://cdn.discordapp.com/embed/avatars/1.png',
    });
    run.stop('SIGTERM');
    expect(await run.code).toBe(0);
    expect(run.out()).toMatch(/Stopping \(SIGTERM\).*\n.*Stopped/su);
  });

  it('creates a vendor on Discord: asks for the required field, shows the row, inserts on yes (demo ERP)', async () => {
    const fake = await fakeDiscord();
    const run = inProcess(['--guild', GUILD], {
      DISCORD_TOKEN: fake.token,
      DISCORD_API_URL: fake.restApi,
      AGENT_CAN_CREATE_VENDOR: 'true',
    });
    await until(() => run.out().includes('Troupe is on Discord'));
    const summon = fake.interact({
      channelId: GENERAL,
      user: ada,
      command: 'summon',
      options: { avatar: 'dewey' },
    });
    await summon.answered(2);
    // Dewey's answers in the channel, newest last.
    const dewey = () =>
      fake.executions.filter((e) => e.username === 'Dewey' && e.message.channel_id === GENERAL);
    const ask = async (content: string) => {
      const before = dewey().length;
      // A summoned avatar greets and follows up first: wait for its answer to this message.
      fake.postMessage({ channelId: GENERAL, author: ada, content });
      // An idle line may follow the answer before the check runs: return the answer itself.
      const answers = () =>
        dewey()
          .slice(before)
          .filter((e) => /vendor|city/iu.test(e.content ?? ''));
      await until(() => answers().length > 0);
      return answers().at(-1)?.content ?? '';
    };
    expect(await ask('Dewey, create vendor Acme Widgets')).toMatch(/I need its city/u);
    const shown = await ask('Dewey, Calgary');
    expect(shown).toMatch(/This is the vendor I'll create/u);
    expect(shown).toMatch(/City: Calgary/u);
    expect(await ask('Dewey, yes')).toMatch(/Created the vendor Acme Widgets \(id \d+\)/u);
    run.stop('SIGTERM');
    expect(await run.code).toBe(0);
  }, 120_000);

  it('--studio: serves the studio over the live bot; the page shows its channels and never posts into Discord', async () => {
    const fake = await fakeDiscord();
    const run = inProcess(['--guild', GUILD, '--studio'], {
      DISCORD_TOKEN: fake.token,
      DISCORD_API_URL: fake.restApi,
    });
    await until(() => /Troupe Studio: .*#token=/u.test(run.out()));
    const { api, base, token } = studioClient(run.out());
    const summon = fake.interact({
      channelId: GENERAL,
      user: ada,
      command: 'summon',
      options: { avatar: 'stargazer' },
    });
    expect((await summon.answered(2))[1]?.content).toContain('Nova is here');
    // The page shows the bot's own floor: Nova present in the Discord channel.
    await expect
      .poll(async () => ((await api('state')).body.actors as { id: string }[]).map((a) => a.id))
      .toContain(`presence:discord:${GENERAL}:nova`);
    const post = await api('playground/message', { text: 'from the page' });
    expect(post.status).toBe(403);
    expect(post.body.error.code).toBe('TROUPE_STUDIO_READ_ONLY');
    const sent = [
      ...fake.executions.map((e) => e.content),
      ...[...fake.messages.values()].flat().map((m) => m.content),
    ];
    expect(sent.join('\n')).not.toContain('from the page');
    run.stop('SIGTERM');
    expect(await run.code).toBe(0);
    // The studio stops with the bot.
    await expect(
      fetch(`${base}api/state`, { headers: { authorization: `Bearer ${token}` } }),
    ).rejects.toThrow();
  });

  it('with TROUPE_DISCORD_INBOX, the interrupts troupe email left in the store are posted there with their buttons, and answered from Discord', async () => {
    const fake = await fakeDiscord();
    const env = {
      TROUPE_STORE: 'sqlite',
      TROUPE_DATA_DIR: await mkdtemp(join(tmpdir(), 'troupe-discord-inbox-')),
      TROUPE_EMAIL_NOW: '2026-11-25T09:00:00Z',
      TROUPE_EMAIL_TIME_ZONE: 'Europe/Berlin',
      LOG_LEVEL: 'silent',
    };
    let emailOut = '';
    const io: CliIo = {
      stdout: (t) => {
        emailOut += t;
      },
      stderr: (t) => {
        emailOut += t;
      },
      env,
      isTTY: false,
    };
    expect(await runCli(['email'], io)).toBe(0);
    expect(emailOut).toContain('Waiting for you (6)');

    const run = inProcess(['--guild', GUILD], {
      ...env,
      DISCORD_TOKEN: fake.token,
      DISCORD_API_URL: fake.restApi,
      TROUPE_DISCORD_INBOX: RANDOM,
    });
    await until(() => run.out().includes('Troupe is on Discord'));
    expect(run.out()).toContain(`Email inbox: interrupts go to channel ${RANDOM} (model: offline`);
    const posted = () =>
      (fake.messages.get(RANDOM) ?? []).filter(
        (m) => ((m.components as unknown[] | undefined) ?? []).length > 0,
      );
    await until(() => posted().length === 6);
    const notify = posted().find((m) => JSON.stringify(m.embeds).includes('Interrupt sample-02#1'));
    const ignore = fake.press({
      messageId: notify?.id as string,
      customId: 'inbox:ignore:sample-02#1',
      user: ada,
      permissions: String(1 << 5),
    });
    await ignore.answered(2);
    expect(JSON.stringify(fake.messages.get(RANDOM)?.find((m) => m.id === notify?.id)?.embeds)).toContain(
      'Ignored by',
    );
    run.stop('SIGTERM');
    expect(await run.code).toBe(0);

    emailOut = '';
    expect(await runCli(['inbox', 'list'], io)).toBe(0);
    expect(emailOut).toContain('Waiting for you (5)');
    expect(emailOut).not.toContain('sample-02#1');
  });

  it('without DISCORD_TOKEN: a configuration error naming the variable and where to get it, exit 2', async () => {
    const run = inProcess([], {});
    expect(await run.code).toBe(2);
    expect(run.err()).toMatch(/TROUPE_CONFIG_INVALID.*DISCORD_TOKEN.*Developer Portal/su);
  });

  it("honours an avatar's own model: refused at start naming the avatar, shown by /troupe config", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-discord-models-'));
    const file = join(dir, 'avatars.yaml');
    await writeFile(
      file,
      'avatars:\n  - { id: nova, name: Nova, model: fast }\n  - { id: rex, name: Rex }\n',
    );
    const fake = await fakeDiscord();
    const env = {
      DISCORD_TOKEN: fake.token,
      DISCORD_API_URL: fake.restApi,
      OPENAI_API_KEY: 'sk-very-secret-key',
    };
    const refused = inProcess(['--avatars', file, '--guild', GUILD], env);
    expect(await refused.code).toBe(2);
    expect(refused.err()).toContain('error TROUPE_AVATAR_MODEL_INVALID: Avatar Nova (nova) has model "fast"');
    expect(refused.out()).toBe('');
    const run = inProcess(['--avatars', file, '--guild', GUILD], {
      ...env,
      TROUPE_MODEL_PROFILES: JSON.stringify({ fast: { provider: 'openai', model: 'gpt-4o' } }),
    });
    await until(() => run.out().includes('Troupe is on Discord'));
    const admin = fake.interact({
      channelId: GENERAL,
      user: ada,
      command: 'troupe',
      subcommand: 'config',
      permissions: String(1 << 5),
    });
    const [shown] = await admin.answered(1);
    expect(shown?.content).toMatch(/avatar models\s+Nova: openai:gpt-4o\n/u);
    expect(shown?.content).not.toContain('sk-very-secret-key');
    run.stop('SIGINT');
    expect(await run.code).toBe(0);
  });

  it('a bad token: TROUPE_DISCORD_TOKEN_INVALID and exit 2, without showing the token', async () => {
    const fake = await fakeDiscord();
    const run = inProcess([], { DISCORD_TOKEN: 'wrong-token-123', DISCORD_API_URL: fake.restApi });
    expect(await run.code).toBe(2);
    expect(run.err()).toMatch(/error TROUPE_DISCORD_TOKEN_INVALID: Discord refused the bot token/u);
    expect(run.err() + run.out()).not.toContain('wrong-token-123');
  });

  it('/troupe config answers admins only, with the effective settings and no secret', async () => {
    const fake = await fakeDiscord();
    const secret = 'sk-very-secret-key';
    const run = inProcess(['--guild', GUILD], {
      DISCORD_TOKEN: fake.token,
      DISCORD_API_URL: fake.restApi,
      OPENAI_API_KEY: secret,
      TROUPE_DISCORD_SUMMONS_PER_DAY: '3',
    });
    await until(() => run.out().includes('Troupe is on Discord'));
    const member = fake.interact({ channelId: GENERAL, user: ada, command: 'troupe', subcommand: 'config' });
    expect((await member.answered(1))[0]).toMatchObject({
      ephemeral: true,
      content: '/troupe config is for server admins (Manage Server).',
    });
    const admin = fake.interact({
      channelId: GENERAL,
      user: ada,
      command: 'troupe',
      subcommand: 'config',
      permissions: String(1 << 5),
    });
    const [shown] = await admin.answered(1);
    expect(shown?.ephemeral).toBe(true);
    expect(shown?.content).toMatch(/summons per day\s+3/u);
    expect(shown?.content).toMatch(/model\s+openai:gpt-4o-mini/u);
    expect(shown?.content).not.toContain(secret);
    expect(shown?.content).not.toContain(fake.token);
    run.stop('SIGINT');
    expect(await run.code).toBe(0);
  });

  it('/troupe usage answers admins only, with the day of every avatar from the ledger the runtime records in', async () => {
    const fake = await fakeDiscord();
    const run = inProcess(['--guild', GUILD], {
      DISCORD_TOKEN: fake.token,
      DISCORD_API_URL: fake.restApi,
      TROUPE_AVATAR_MAX_TOKENS_PER_DAY: '5000',
    });
    await until(() => run.out().includes('Troupe is on Discord'));
    const summon = fake.interact({
      channelId: GENERAL,
      user: ada,
      command: 'summon',
      options: { avatar: 'nova' },
    });
    expect((await summon.answered(2))[1]?.content).toContain('Nova is here');
    const member = fake.interact({ channelId: GENERAL, user: ada, command: 'troupe', subcommand: 'usage' });
    expect((await member.answered(1))[0]).toMatchObject({
      ephemeral: true,
      content: '/troupe usage is for server admins (Manage Server).',
    });
    const admin = fake.interact({
      channelId: GENERAL,
      user: ada,
      command: 'troupe',
      subcommand: 'usage',
      permissions: String(1 << 5),
    });
    const [shown] = await admin.answered(1);
    expect(shown?.ephemeral).toBe(true);
    const lines = shown?.content?.split('\n') ?? [];
    expect(lines[0]).toMatch(
      /^Usage today \(UTC \d{4}-\d\d-\d\d; costs estimated from TROUPE_MODEL_PRICES\):$/u,
    );
    expect(lines.slice(1).map((l) => l.split(':')[0])).toEqual(['Dewey', 'Nova', 'Rex', 'Wren', 'All calls']);
    // Nova's greeting, written by the offline model, is in the runtime's ledger.
    expect(lines[2]).toMatch(/^Nova: 1 call, .* today; cap 0 of 5,000 tokens today \(0\.0%\)$/u);
    expect(lines[1]).toBe('Dewey: 0 calls, 0 tokens, $0 today; cap 0 of 5,000 tokens today (0.0%)');
    run.stop('SIGINT');
    expect(await run.code).toBe(0);
  });

  it('as a process: SIGTERM stops it cleanly within seconds with exit 0', async () => {
    const fake = await fakeDiscord();
    const dir = await mkdtemp(join(tmpdir(), 'troupe-discord-'));
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'discord', '--guild', GUILD],
      {
        env: {
          ...process.env,
          DISCORD_TOKEN: fake.token,
          DISCORD_API_URL: fake.restApi,
          TROUPE_DATA_DIR: dir,
          LOG_LEVEL: 'warn',
          NO_COLOR: '1',
        },
      },
    );
    children.push(child);
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await until(() => out.includes('Troupe is on Discord'), 20_000);
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'hello everyone' });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toContain('Stopped');
  }, 30_000);
});
