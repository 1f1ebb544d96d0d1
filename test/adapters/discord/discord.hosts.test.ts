import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ada, defaultGuild, GENERAL } from '../../support/discordHarness.js';
import { type FakeDiscord, type FakeGuild, startFakeDiscord } from '../../support/fakeDiscord.js';
import { type FakeMongoServer, startFakeMongoServer } from '../../support/fakeMongoServer.js';

// The timeout guards a hang (real processes, real sockets): a loaded machine is only slower.
const until = (check: () => boolean | undefined, timeout = 150_000) =>
  vi.waitFor(
    () => {
      if (!check()) throw new Error('not yet');
    },
    { timeout, interval: 20 },
  );

// Discord routes a guild to shard (guild_id >> 22) % shard_count: with 2 shards, the default guild is shard 0's
// and this one shard 1's.
const OTHER_GUILD = '110000000000000001';
const OTHER_GENERAL = '210000000000000001';
const otherGuild: FakeGuild = {
  id: OTHER_GUILD,
  name: 'Other Server',
  channels: [{ id: OTHER_GENERAL, name: 'general', type: 0 }],
};

/** One host: `troupe discord --shards <ids> --shard-count 2`, in a process group of its own. */
interface Host {
  child: ChildProcessWithoutNullStreams;
  out: () => string;
  exited: Promise<number | null>;
}

describe('troupe discord on two hosts: disjoint --shards lists out of one --shard-count, one MongoDB', () => {
  let mongo: FakeMongoServer;
  let avatarsFile: string;
  let fake: FakeDiscord | undefined;
  const hosts: Host[] = [];
  beforeAll(async () => {
    // A host killed mid-transaction holds its documents until the server reaps the transaction: a
    // server set up with a short `transactionLifetimeLimitSeconds`, so the restart waits seconds, not a minute.
    mongo = await startFakeMongoServer({ replicaSet: 'rs0', transactionLifetimeLimitMs: 3_000 });
    const dir = await mkdtemp(join(tmpdir(), 'troupe-hosts-'));
    avatarsFile = join(dir, 'avatars.yaml');
    const residentIn = JSON.stringify([`discord:${GENERAL}`, `discord:${OTHER_GENERAL}`]);
    await writeFile(
      avatarsFile,
      `avatars:\n  - { id: nova, name: Nova, emoji: "🌟", residentIn: ${residentIn} }\n  - { id: rex, name: Rex, emoji: "🦖", residentIn: ${residentIn} }\n`,
    );
  });
  afterAll(async () => {
    await mongo?.close();
  });
  afterEach(async (context) => {
    // A failed run shows what each host printed: the step that hung is in there.
    if (context.task.result?.state === 'fail')
      for (const [i, host] of hosts.entries())
        process.stderr.write(`--- host ${i} printed:\n${host.out()}\n`);
    for (const host of hosts.splice(0)) killGroup(host);
    await fake?.close();
  });

  function startHost(discord: FakeDiscord, shards: string, database: string): Host {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/main.ts',
        'discord',
        '--shards',
        shards,
        '--shard-count',
        '2',
        '--avatars',
        avatarsFile,
      ],
      {
        // Its own process group, so a host's death takes its shard processes with it.
        detached: true,
        env: {
          ...process.env,
          DISCORD_TOKEN: discord.token,
          DISCORD_API_URL: discord.restApi,
          MONGODB_URI: mongo.uri,
          MONGODB_DATABASE: database,
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
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const host = { child, out: () => out, exited };
    hosts.push(host);
    return host;
  }

  /** The host dies (a machine lost, SIGKILL): its manager and shard processes at once. */
  function killGroup(host: Host): void {
    if (host.child.pid === undefined) return;
    try {
      process.kill(-host.child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }

  /** The host's exit code once it stops; a host that does not stop within a minute fails with what it printed. */
  async function exitOf(host: Host): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the host did not stop; it printed:\n${host.out()}`)),
        60_000,
      );
    });
    try {
      return await Promise.race([host.exited, hung]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The quoted question each answer in a channel carries on its first line. */
  const answersIn = (discord: FakeDiscord, channelId: string) =>
    discord.executions
      .filter((e) => e.message.channel_id === channelId)
      .map((e) => e.content?.split('\n')[0]);

  async function ask(discord: FakeDiscord, channelId: string, content: string): Promise<void> {
    const before = answersIn(discord, channelId).length;
    discord.postMessage({ channelId, author: ada, content });
    await until(() => answersIn(discord, channelId).length > before);
  }

  it('each host runs only its shards; a message in each guild is answered exactly once, by the host holding its shard', async () => {
    fake = await startFakeDiscord({
      guilds: [defaultGuild, otherGuild],
      recommendedShards: 2,
      maxConcurrency: 2,
    });
    const discord = fake;
    const first = startHost(discord, '0', 'hosts');
    const second = startHost(discord, '1', 'hosts');
    await until(
      () => first.out().includes('Troupe is on Discord') && second.out().includes('Troupe is on Discord'),
    );
    expect(discord.identifies.map((i) => i.shard).sort()).toEqual([
      [0, 2],
      [1, 2],
    ]);
    // Commands are per application: only the host running shard 0 registers them.
    expect(discord.requests.filter((r) => r.method === 'PUT' && r.path.endsWith('/commands'))).toHaveLength(
      1,
    );

    const questions = ['Nova, first question', 'Rex, second question', 'Nova, third question'];
    for (const q of questions) {
      await ask(discord, GENERAL, `${q} (one)`);
      await ask(discord, OTHER_GENERAL, `${q} (two)`);
    }
    for (const host of [first, second]) host.child.kill('SIGTERM');
    expect(await exitOf(first)).toBe(0);
    expect(await exitOf(second)).toBe(0);
    for (const channel of [GENERAL, OTHER_GENERAL]) {
      const answers = answersIn(discord, channel);
      expect(answers).toHaveLength(3);
      expect(new Set(answers).size).toBe(3);
    }
  }, 400_000);

  it('a host killed mid-traffic and restarted: its guild is answered again, nothing twice, and the other host never stopped', async () => {
    fake = await startFakeDiscord({
      guilds: [defaultGuild, otherGuild],
      recommendedShards: 2,
      maxConcurrency: 2,
    });
    const discord = fake;
    const steady = startHost(discord, '0', 'hosts-restart');
    let dying = startHost(discord, '1', 'hosts-restart');
    await until(
      () => steady.out().includes('Troupe is on Discord') && dying.out().includes('Troupe is on Discord'),
    );
    await ask(discord, OTHER_GENERAL, 'Nova, before the crash');

    // A burst to the dying host's guild; it dies as soon as the first of it is answered.
    const burst = ['Rex, burst one', 'Nova, burst two', 'Rex, burst three', 'Nova, burst four'];
    const beforeBurst = answersIn(discord, OTHER_GENERAL).length;
    for (const content of burst) discord.postMessage({ channelId: OTHER_GENERAL, author: ada, content });
    await until(() => answersIn(discord, OTHER_GENERAL).length > beforeBurst);
    killGroup(dying);
    await dying.exited;
    // The other host's guild is answered while this one is down.
    await ask(discord, GENERAL, 'Nova, while the other host is down');

    dying = startHost(discord, '1', 'hosts-restart');
    await until(() => dying.out().includes('Troupe is on Discord'));
    await ask(discord, OTHER_GENERAL, 'Rex, after the restart');
    await ask(discord, OTHER_GENERAL, 'Nova, after the restart too');
    for (const host of [steady, dying]) host.child.kill('SIGTERM');
    expect(await exitOf(steady)).toBe(0);
    expect(await exitOf(dying)).toBe(0);

    const answers = answersIn(discord, OTHER_GENERAL);
    // Nothing doubled across the crash: every answer quotes a different question.
    expect(new Set(answers).size).toBe(answers.length);
    for (const q of ['Nova, before the crash', 'Rex, after the restart', 'Nova, after the restart too'])
      expect(answers.filter((a) => a?.includes(q))).toHaveLength(1);
    expect(answersIn(discord, GENERAL)).toHaveLength(1);
  }, 500_000);
});
