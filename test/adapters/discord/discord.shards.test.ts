import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ada, defaultGuild, GENERAL, GUILD } from '../../support/discordHarness.js';
import { type FakeDiscord, startFakeDiscord } from '../../support/fakeDiscord.js';
import { type FakeMongoServer, startFakeMongoServer } from '../../support/fakeMongoServer.js';

// The shards are child processes that load the CLI through tsx: on a loaded machine starting both
// takes well over 30 s, so the waits on them are generous (they end as soon as the check holds).
const until = (check: () => boolean | undefined, timeout = 120_000) =>
  vi.waitFor(
    () => {
      if (!check()) throw new Error('not yet');
    },
    { timeout, interval: 20 },
  );

describe('troupe discord --shards (discord.js ShardingManager, state in MongoDB)', () => {
  let mongo: FakeMongoServer;
  let fake: FakeDiscord | undefined;
  let child: ChildProcessWithoutNullStreams | undefined;
  beforeAll(async () => {
    mongo = await startFakeMongoServer({ replicaSet: 'rs0' });
  });
  afterAll(async () => {
    await mongo?.close();
  });
  afterEach(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    await fake?.close();
  });

  it('two shards that both hold a guild (a reshard overlap) never answer the same message twice, and stop cleanly', async () => {
    // Both shards get the guild and every event in it.
    fake = await startFakeDiscord({
      guilds: [defaultGuild],
      recommendedShards: 2,
      maxConcurrency: 2,
      guildsToEveryShard: true,
    });
    const discord = fake;
    child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/main.ts',
        'discord',
        '--shards',
        'auto',
        '--guild',
        GUILD,
        '--avatars',
        'test/fixtures/discord-residents.yaml',
      ],
      {
        env: {
          ...process.env,
          DISCORD_TOKEN: discord.token,
          DISCORD_API_URL: discord.restApi,
          MONGODB_URI: mongo.uri,
          MONGODB_DATABASE: 'shards',
          LOG_LEVEL: 'error',
          NO_COLOR: '1',
        },
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => resolve(code)));
    await until(() => (out.match(/Troupe is on Discord/gu) ?? []).length >= 2);
    expect(discord.identifies.map((i) => i.shard).sort()).toEqual([
      [0, 2],
      [1, 2],
    ]);
    // Commands are per application: one shard registers them.
    expect(discord.requests.filter((r) => r.method === 'PUT' && r.path.endsWith('/commands'))).toHaveLength(
      1,
    );

    const asked = ['Nova, first question', 'Rex, second question', 'Nova, third question'];
    for (const content of asked) {
      discord.postMessage({ channelId: GENERAL, author: ada, content });
      await until(() => discord.executions.length >= asked.indexOf(content) + 1);
    }
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // Each message answered exactly once, by one of the shards.
    const answered = discord.executions.map((e) => e.content?.split('\n')[0]);
    expect(discord.executions).toHaveLength(3);
    expect(new Set(answered).size).toBe(3);
  }, 240_000);
});
