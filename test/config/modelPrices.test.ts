import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  builtInModelPrices,
  costOf,
  modelPricesFromEnv,
  PRICES_AS_OF,
  parseModelPrices,
} from '../../src/config/modelPrices.js';
import { TroupeError } from '../../src/ports/troupeError.js';

const dir = mkdtempSync(join(tmpdir(), 'troupe-prices-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The TroupeError `fn` throws. */
function thrown(fn: () => unknown): TroupeError {
  try {
    fn();
  } catch (error) {
    expect(TroupeError.isInstance(error)).toBe(true);
    return error as TroupeError;
  }
  throw new Error('expected a TroupeError');
}

describe('the built-in price table', () => {
  it('is dated and prices common OpenAI and Anthropic models per million tokens', () => {
    expect(PRICES_AS_OF).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const prices = modelPricesFromEnv({});
    expect(prices).toBe(builtInModelPrices);
    // 1,000 in and 500 out at 0.15 / 0.60 USD per million.
    expect(costOf(prices, 'openai:gpt-4o-mini', 1_000, 500)).toBeCloseTo(0.00045, 12);
    expect(costOf(prices, 'openai:gpt-4.1', 1_000_000, 0)).toBe(2);
    expect(costOf(prices, 'anthropic:claude-3-5-haiku-latest', 0, 1_000_000)).toBe(4);
    expect(costOf(prices, 'anthropic:claude-sonnet-4-5', 1_000_000, 1_000_000)).toBe(18);
  });

  it('knows no price for an unknown model, and the offline provider costs nothing', () => {
    expect(costOf(builtInModelPrices, 'openai-compatible:llama3.2', 100, 100)).toBeUndefined();
    expect(costOf(builtInModelPrices, 'offline:scripted', 100, 100)).toBe(0);
    expect(costOf(builtInModelPrices, 'offline', 0, 0)).toBe(0);
  });
});

describe('TROUPE_MODEL_PRICES', () => {
  it('overrides the built-in table key by key and adds models', () => {
    const prices = modelPricesFromEnv({
      TROUPE_MODEL_PRICES:
        '{"openai:gpt-4o-mini":{"input":1,"output":2},"llama3.2":{"input":0.01,"output":0.02}}',
    });
    expect(costOf(prices, 'openai:gpt-4o-mini', 1_000_000, 1_000_000)).toBe(3);
    // Untouched built-ins stay; a bare id prices the model under any provider.
    expect(costOf(prices, 'openai:gpt-4o', 1_000_000, 0)).toBe(2.5);
    expect(costOf(prices, 'openai-compatible:llama3.2', 1_000_000, 1_000_000)).toBeCloseTo(0.03, 12);
  });

  it('a bare model id replaces the built-in price of that model', () => {
    const prices = modelPricesFromEnv({ TROUPE_MODEL_PRICES: '{"gpt-4o":{"input":9,"output":9}}' });
    expect(costOf(prices, 'openai:gpt-4o', 1_000_000, 0)).toBe(9);
  });

  it('reads a file named in it', () => {
    const file = join(dir, 'prices.json');
    writeFileSync(file, JSON.stringify({ 'openai-compatible:qwen': { input: 0.5, output: 1.5 } }));
    const prices = modelPricesFromEnv({ TROUPE_MODEL_PRICES: file });
    expect(costOf(prices, 'openai-compatible:qwen', 2_000_000, 1_000_000)).toBe(2.5);
  });

  it('refuses JSON that is not JSON, with its own code', () => {
    const error = thrown(() => modelPricesFromEnv({ TROUPE_MODEL_PRICES: '{"gpt-4o": ' }));
    expect(error.code).toBe('TROUPE_MODEL_PRICES_INVALID');
    expect(error.message).toContain('TROUPE_MODEL_PRICES is not JSON');
  });

  it('names the model and field of a bad price', () => {
    const error = thrown(() => parseModelPrices('{"openai:gpt-4o":{"input":-1,"output":2},"x":{"input":1}}'));
    expect(error.code).toBe('TROUPE_MODEL_PRICES_INVALID');
    expect(error.message).toContain('openai:gpt-4o.input: a number of USD per million tokens, 0 or more');
    expect(error.message).toContain('x.output');
  });

  it('names a file that cannot be read, and a file holding a bad table', () => {
    const missing = thrown(() => modelPricesFromEnv({ TROUPE_MODEL_PRICES: join(dir, 'none.json') }));
    expect(missing.code).toBe('TROUPE_MODEL_PRICES_INVALID');
    expect(missing.message).toContain('none.json');
    expect(missing.message).toContain('no such file');
    const file = join(dir, 'bad.json');
    writeFileSync(file, '["not", "a", "table"]');
    const bad = thrown(() => modelPricesFromEnv({ TROUPE_MODEL_PRICES: file }));
    expect(bad.message).toContain('bad.json');
    expect(bad.message).toContain('a JSON object of prices by model');
  });
});
