import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createUsageLedger } from '../../src/actors/usage/storedUsageLedger.js';
import { openSqliteStore } from '../../src/adapters/store/sqlite/sqliteStore.js';
import { withOperatorPrices } from '../../src/config/modelPrices.js';
import type { ModelCallUsage } from '../../src/ports/usage.js';
import { runTroupe } from '../support/runTroupe.js';

const prices = withOperatorPrices({ 'openai:gpt-test': { input: 2, output: 8 } });

/** A data directory whose SQLite store holds `calls`, recorded as a running Troupe would. */
async function dataDirWith(calls: Omit<ModelCallUsage, 'at'>[], at = Date.now()): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-usage-cli-'));
  const store = await openSqliteStore({ path: join(dir, 'troupe.db') });
  const ledger = createUsageLedger({ store: store.documents, prices, scheduleFlush: () => undefined });
  for (const call of calls) ledger.record({ ...call, at });
  await ledger.flush();
  await store.close();
  return dir;
}

const ada = { kind: 'avatar', id: 'ada' } as const;
const bo = { kind: 'avatar', id: 'bo' } as const;
const base = { model: 'openai:gpt-test', scope: 'discord:1', purpose: 'turn', characters: 100 } as const;

describe('troupe usage', () => {
  it('prints calls, tokens, characters and cost per avatar with a total; calls without usage as such', async () => {
    const dir = await dataDirWith([
      { ...base, spender: ada, inputTokens: 10_000, outputTokens: 2_400 },
      { ...base, spender: ada, inputTokens: 2_000, outputTokens: 0 },
      {
        ...base,
        spender: bo,
        model: 'openai-compatible:llama',
        inputTokens: undefined,
        outputTokens: undefined,
      },
      {
        ...base,
        spender: bo,
        model: 'openai-compatible:llama',
        inputTokens: undefined,
        outputTokens: undefined,
      },
      { ...base, spender: bo, model: 'openai-compatible:llama', inputTokens: 5, outputTokens: 5 },
    ]);
    const run = await runTroupe(['usage'], { TROUPE_DATA_DIR: dir, LOG_LEVEL: 'silent' });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(/^Model calls since \d{4}-\d\d-\d\d \d\d:00 UTC, by avatar:$/u);
    expect(lines[1]?.trim().split(/\s{2,}/u)).toEqual([
      'avatar',
      'calls',
      'tokens in',
      'tokens out',
      'characters',
      'cost',
    ]);
    // 12,000 in at 2 USD and 2,400 out at 8 USD per million: 0.0432 USD.
    expect(lines[2]?.trim().split(/\s{2,}/u)).toEqual(['ada', '2', '12,000', '2,400', '200', '$0.043']);
    expect(lines[3]?.trim().split(/\s{2,}/u)).toEqual([
      'bo',
      '3',
      '5',
      '5',
      '300',
      '—',
      '2 calls without usage; 1 call unpriced',
    ]);
    expect(lines[4]?.trim().split(/\s{2,}/u)).toEqual([
      'total',
      '5',
      '12,005',
      '2,405',
      '500',
      '$0.043',
      '2 calls without usage; 1 call unpriced',
    ]);
    expect(run.stdout).toContain('No daily caps set');
  });

  it('groups --by channel, purpose or model, and --json gives rows, total and caps with today’s use', async () => {
    const dir = await dataDirWith([
      { ...base, spender: ada, inputTokens: 10_000, outputTokens: 2_400 },
      { ...base, spender: ada, purpose: 'greeting', scope: 'discord:2', inputTokens: 100, outputTokens: 0 },
      {
        ...base,
        spender: { kind: 'email' },
        scope: 'mail:sam',
        purpose: 'triage',
        inputTokens: 300,
        outputTokens: 0,
      },
    ]);
    const env = {
      TROUPE_DATA_DIR: dir,
      LOG_LEVEL: 'silent',
      TROUPE_AVATAR_MAX_TOKENS_PER_DAY: '50000',
      TROUPE_MAX_COST_PER_DAY_USD: '0.5',
    };
    // 10,400 in at 2 USD and 2,400 out at 8 USD per million: 0.04 USD.
    const byPurpose = await runTroupe(['usage', '--by', 'purpose'], env);
    expect(byPurpose.stdout).toMatch(/^ {2}purpose\s+calls/mu);
    expect(byPurpose.stdout).toMatch(/^ {2}turn\s+1\s+10,000\s+2,400/mu);
    expect(byPurpose.stdout).toMatch(/^ {2}triage\s+1\s+300\s+0/mu);
    expect(byPurpose.stdout).toContain('ada: 12,500 of 50,000 tokens today (25.0%)');
    expect(byPurpose.stdout).toMatch(/All calls: \$0\.04\d of \$0\.50 today \(8\.\d%\)/u);

    const json = await runTroupe(['usage', '--by', 'channel', '--since', '7d', '--json'], env);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as {
      by: string;
      rows: { key: string; calls: number }[];
      total: { calls: number; inputTokens: number; callsWithoutUsage: number };
      caps: { scope: string; avatar?: string; measure: string; limit: number; used: number }[];
    };
    expect(report.by).toBe('channel');
    expect(report.rows.map((r) => [r.key, r.calls])).toEqual([
      ['discord:1', 1],
      ['mail:sam', 1],
      ['discord:2', 1],
    ]);
    expect(report.total).toMatchObject({ calls: 3, inputTokens: 10_400, callsWithoutUsage: 0 });
    expect(report.caps).toEqual([
      { scope: 'avatar', avatar: 'ada', measure: 'tokens', limit: 50_000, used: 12_500 },
      { scope: 'total', measure: 'costUsd', limit: 0.5, used: expect.closeTo(0.04, 10) },
    ]);
  });

  it('leaves out calls before --since, and refuses a --since, --by or cap it cannot read', async () => {
    const dir = await dataDirWith(
      [{ ...base, spender: ada, inputTokens: 1, outputTokens: 1 }],
      Date.now() - 3 * 3_600_000,
    );
    const env = { TROUPE_DATA_DIR: dir, LOG_LEVEL: 'silent' };
    expect((await runTroupe(['usage', '--since', '1h'], env)).stdout).toContain('  none');
    expect((await runTroupe(['usage', '--since', '5h'], env)).stdout).toMatch(/^ {2}ada\s+1/mu);

    const since = await runTroupe(['usage', '--since', 'yesterday'], env);
    expect(since.code).toBe(2);
    expect(since.stderr).toContain('error TROUPE_CONFIG_INVALID: --since "yesterday" is not a span');
    const by = await runTroupe(['usage', '--by', 'mood'], env);
    expect(by.code).toBe(2);
    expect(by.stderr).toContain('avatar, channel, purpose, model');
    const cap = await runTroupe(['usage'], { ...env, TROUPE_MAX_TOKENS_PER_DAY: '-5' });
    expect(cap.code).toBe(2);
    expect(cap.stderr).toContain(
      'TROUPE_MAX_TOKENS_PER_DAY="-5" is not allowed; expected a whole number from 0 to 1000000000000',
    );
  });

  it('with --avatars, an avatar’s own caps replace the per-avatar ones (0: none), and capped avatars that spent nothing are listed', async () => {
    const dir = await dataDirWith([
      { ...base, spender: ada, inputTokens: 10_000, outputTokens: 2_400 },
      { ...base, spender: bo, inputTokens: 100, outputTokens: 0 },
    ]);
    const avatars = join(dir, 'avatars.yaml');
    await writeFile(
      avatars,
      [
        'avatars:',
        '  - { id: ada, name: Ada, caps: { maxTokensPerDay: 20000 } }',
        '  - { id: bo, name: Bo, caps: { maxTokensPerDay: 0 } }',
        '  - { id: cy, name: Cy }',
        '  - { id: di, name: Di, caps: { maxCostPerDayUsd: 0.25 } }',
      ].join('\n'),
    );
    const env = { TROUPE_DATA_DIR: dir, LOG_LEVEL: 'silent', TROUPE_AVATAR_MAX_TOKENS_PER_DAY: '50000' };
    const run = await runTroupe(['usage', '--avatars', avatars, '--json'], env);
    expect(run.stderr).toBe('');
    const report = JSON.parse(run.stdout) as { caps: unknown[] };
    expect(report.caps).toEqual([
      { scope: 'avatar', avatar: 'ada', measure: 'tokens', limit: 20_000, used: 12_400 },
      { scope: 'avatar', avatar: 'cy', measure: 'tokens', limit: 50_000, used: 0 },
      // Each measure of its own replaces that one only: di keeps the token cap for every avatar.
      { scope: 'avatar', avatar: 'di', measure: 'tokens', limit: 50_000, used: 0 },
      { scope: 'avatar', avatar: 'di', measure: 'costUsd', limit: 0.25, used: 0 },
    ]);
    const text = await runTroupe(['usage', '--avatars', avatars], env);
    expect(text.stdout).toContain('ada: 12,400 of 20,000 tokens today (62.0%)');
    expect(text.stdout).toContain('cy: 0 of 50,000 tokens today (0.0%)');
    expect(text.stdout).not.toMatch(/^ {2}bo: /mu);

    // Only caps of its own: listed although the environment sets none.
    const own = await runTroupe(['usage', '--avatars', avatars], {
      TROUPE_DATA_DIR: dir,
      LOG_LEVEL: 'silent',
    });
    expect(own.stdout).toContain('ada: 12,400 of 20,000 tokens today (62.0%)');
    expect(own.stdout).not.toContain('No daily caps set');
    const missing = await runTroupe(['usage', '--avatars', join(dir, 'nope.yaml')], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('TROUPE_AVATARS_NOT_FOUND');
  });

  it('with the channel-hour cap set, shows per channel the avatars’ calls in the ledger’s current and previous hour', async () => {
    const now = Date.now();
    const hour = Math.floor(now / 3_600_000) * 3_600_000;
    const dir = await dataDirWith([
      { ...base, spender: ada, inputTokens: 1, outputTokens: 1 },
      { ...base, spender: bo, purpose: 'follow-up', inputTokens: 1, outputTokens: 1 },
      { ...base, spender: ada, scope: 'discord:2', purpose: 'greeting', inputTokens: 1, outputTokens: 1 },
      {
        ...base,
        spender: { kind: 'email' },
        scope: 'mail:sam',
        purpose: 'triage',
        inputTokens: 1,
        outputTokens: 1,
      },
    ]);
    // Two hours back: outside the window.
    const old = createUsageLedger({
      store: (await openSqliteStore({ path: join(dir, 'troupe.db') })).documents,
      prices,
      scheduleFlush: () => undefined,
    });
    old.record({ ...base, spender: ada, at: hour - 2 * 3_600_000 + 1, inputTokens: 1, outputTokens: 1 });
    await old.flush();
    const env = {
      TROUPE_DATA_DIR: dir,
      LOG_LEVEL: 'silent',
      TROUPE_CHANNEL_MAX_AVATAR_MESSAGES_PER_HOUR: '12',
    };
    const json = await runTroupe(['usage', '--json'], env);
    const report = JSON.parse(json.stdout) as { channelHour: unknown };
    expect(report.channelHour).toEqual({
      limit: 12,
      since: new Date(hour - 3_600_000).toISOString(),
      channels: expect.arrayContaining([
        { channel: 'discord:1', calls: 2 },
        { channel: 'discord:2', calls: 1 },
      ]),
    });
    expect((report.channelHour as { channels: unknown[] }).channels).toHaveLength(2);
    const text = await runTroupe(['usage'], env);
    expect(text.stdout).toContain('Channel cap: 12 avatar messages per channel per rolling hour.');
    expect(text.stdout).toMatch(/^ {2}discord:1: 2 calls$/mu);
    expect(text.stdout).toContain('which covers the last 60 minutes');
    expect(
      (await runTroupe(['usage', '--json'], { TROUPE_DATA_DIR: dir, LOG_LEVEL: 'silent' })).stdout,
    ).not.toContain('channelHour');
  });
});
