import { describe, expect, it } from 'vitest';
import { readDiscordShardPlan } from '../../src/cli/discordShardPlan.js';
import { type CliIo, runCli } from '../../src/cli/program.js';

/** Runs `troupe discord` in-process with the given flags; a refused flag returns before any stop. */
async function refused(args: string[]) {
  let stderr = '';
  const io: CliIo = {
    stdout: () => undefined,
    stderr: (t) => {
      stderr += t;
    },
    // A token that is never used: the flags are read before anything connects.
    env: { TROUPE_STORE: 'memory', LOG_LEVEL: 'silent', DISCORD_TOKEN: 'x'.repeat(70) },
    isTTY: false,
    stopSignal: () => new Promise<string>(() => undefined),
  };
  const code = await runCli(['discord', ...args], io);
  return { code, stderr };
}

describe('troupe discord --shards / --shard-count', () => {
  it.each([
    [['--shards', '0,1'], /--shard-count/u],
    [['--shards', '0,4', '--shard-count', '4'], /shard 4 does not exist among 4 \(ids run from 0 to 3\)/u],
    [['--shards', '1,1', '--shard-count', '4'], /names shard 1 twice/u],
    [['--shards', '0,x', '--shard-count', '4'], /"x" is not a shard id/u],
    [['--shards', '0', '--shard-count', '0'], /--shard-count "0" is not a whole number from 1/u],
    [['--shards', 'auto', '--shard-count', '4'], /not with --shards auto/u],
    [['--shard-count', '4'], /--shards is missing or empty/u],
    [['--shards', 'many'], /is not "auto", a count from 1, or shard ids/u],
  ])('%j is refused with TROUPE_DISCORD_SHARDS_INVALID and exit 2', async (args, message) => {
    const run = await refused(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error TROUPE_DISCORD_SHARDS_INVALID: /u);
    expect(run.stderr).toMatch(message);
  });

  it('reads auto, a count (all shards here) and a list out of a total (sorted)', () => {
    expect(readDiscordShardPlan({ shards: 'auto' })).toEqual({ kind: 'auto' });
    expect(readDiscordShardPlan({ shards: '3' })).toEqual({ kind: 'list', ids: [0, 1, 2], total: 3 });
    expect(readDiscordShardPlan({ shards: '3,1', shardCount: '4' })).toEqual({
      kind: 'list',
      ids: [1, 3],
      total: 4,
    });
    // With --shard-count, a single number is one shard id, not a count.
    expect(readDiscordShardPlan({ shards: '2', shardCount: '4' })).toEqual({
      kind: 'list',
      ids: [2],
      total: 4,
    });
  });
});
