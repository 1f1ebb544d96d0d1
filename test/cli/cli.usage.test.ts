import { mkdtemp } from 'node:fs/promises';
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
});
