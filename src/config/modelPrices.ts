import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { configErrorCodes } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';
import { text } from './settingSchemas.js';
import { defineSettings, type EnvRecord } from './settings.js';
import { zodIssues } from './zodIssues.js';

/** What one model costs, in USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
}

/**
 * Prices by model: keys are `provider:model` (`openai:gpt-4o-mini`) or a bare model id
 * (`gpt-4o-mini`, which prices that model under any provider). Read with {@link costOf}.
 */
export type ModelPrices = ReadonlyMap<string, ModelPrice>;

/** The day the built-in prices were taken from the providers' price pages. */
export const PRICES_AS_OF = '2025-11-30';

const openAi = (input: number, output: number, ...ids: string[]) =>
  ids.map((id) => [`openai:${id}`, { input, output }] as const);
const anthropic = (input: number, output: number, ...ids: string[]) =>
  ids.map((id) => [`anthropic:${id}`, { input, output }] as const);

/**
 * Prices of common models as published on {@link PRICES_AS_OF} (USD per million input and output
 * tokens, standard tier, no cached-input discount). The operator's `TROUPE_MODEL_PRICES` overrides
 * them key by key.
 */
export const builtInModelPrices: ModelPrices = new Map<string, ModelPrice>([
  ...openAi(2.5, 10, 'gpt-4o', 'gpt-4o-2024-08-06', 'gpt-4o-2024-11-20'),
  ...openAi(5, 15, 'gpt-4o-2024-05-13'),
  ...openAi(0.15, 0.6, 'gpt-4o-mini', 'gpt-4o-mini-2024-07-18'),
  ...openAi(2, 8, 'gpt-4.1', 'gpt-4.1-2025-04-14'),
  ...openAi(0.4, 1.6, 'gpt-4.1-mini', 'gpt-4.1-mini-2025-04-14'),
  ...openAi(0.1, 0.4, 'gpt-4.1-nano', 'gpt-4.1-nano-2025-04-14'),
  ...openAi(1.1, 4.4, 'o1-mini', 'o3-mini', 'o3-mini-2025-01-31', 'o4-mini', 'o4-mini-2025-04-16'),
  ...openAi(1.25, 10, 'gpt-5', 'gpt-5-2025-08-07'),
  ...openAi(0.25, 2, 'gpt-5-mini', 'gpt-5-mini-2025-08-07'),
  ...openAi(0.05, 0.4, 'gpt-5-nano', 'gpt-5-nano-2025-08-07'),
  ...anthropic(0.8, 4, 'claude-3-5-haiku-latest', 'claude-3-5-haiku-20241022'),
  ...anthropic(1, 5, 'claude-haiku-4-5', 'claude-haiku-4-5-20251001'),
  ...anthropic(
    3,
    15,
    'claude-3-5-sonnet-latest',
    'claude-3-5-sonnet-20241022',
    'claude-3-7-sonnet-latest',
    'claude-3-7-sonnet-20250219',
    'claude-sonnet-4-0',
    'claude-sonnet-4-20250514',
    'claude-sonnet-4-5',
    'claude-sonnet-4-5-20250929',
  ),
  ...anthropic(
    15,
    75,
    'claude-opus-4-0',
    'claude-opus-4-20250514',
    'claude-opus-4-1',
    'claude-opus-4-1-20250805',
  ),
  ...anthropic(5, 25, 'claude-opus-4-5', 'claude-opus-4-5-20251101'),
]);

const usdPerMillion = z
  .number({ error: 'a number of USD per million tokens, 0 or more' })
  .finite('a number of USD per million tokens, 0 or more')
  .min(0, 'a number of USD per million tokens, 0 or more');

const priceSchema = z.strictObject(
  { input: usdPerMillion, output: usdPerMillion },
  { error: 'an object {"input": <USD per million tokens>, "output": <USD per million tokens>}' },
);

const priceTableSchema = z.record(
  z
    .string()
    .trim()
    .min(1, 'a model id, or provider:model')
    .max(200, 'a model id of at most 200 characters')
    .refine((key) => !/\s/u.test(key), 'a model id without spaces'),
  priceSchema,
  { error: 'a JSON object of prices by model, e.g. {"openai:gpt-4o-mini":{"input":0.15,"output":0.6}}' },
);

/** The model id of `provider:model` (a bare id as it is). */
const modelIdOf = (key: string): string => {
  const colon = key.indexOf(':');
  return colon < 0 ? key : key.slice(colon + 1);
};

/**
 * The price table the ledger uses: the built-in prices with the operator's on top, key by key. A
 * bare model id of the operator's replaces the built-in price of that model under every provider.
 */
export function withOperatorPrices(
  operator: Readonly<Record<string, ModelPrice>>,
  builtIn: ModelPrices = builtInModelPrices,
): ModelPrices {
  const merged = new Map(builtIn);
  for (const key of Object.keys(operator))
    if (!key.includes(':'))
      for (const known of builtIn.keys()) if (modelIdOf(known) === key) merged.delete(known);
  for (const [key, price] of Object.entries(operator))
    merged.set(key, { input: price.input, output: price.output });
  return merged;
}

const pricesError = (message: string, cause?: unknown) =>
  new TroupeError(configErrorCodes.modelPricesInvalid, message, {
    ...(cause !== undefined ? { cause } : {}),
    details: { variable: 'TROUPE_MODEL_PRICES' },
  });

/**
 * Reads a price table written as JSON (`{"openai:gpt-4o-mini": {"input": 0.15, "output": 0.6}}`,
 * USD per million tokens). `source` names where it came from in errors.
 * @throws TroupeError `TROUPE_MODEL_PRICES_INVALID` naming the model and field that is wrong.
 */
export function parseModelPrices(json: string, source = 'TROUPE_MODEL_PRICES'): Record<string, ModelPrice> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw pricesError(
      `${source} is not JSON: expected prices by model in USD per million tokens, e.g. {"openai:gpt-4o-mini":{"input":0.15,"output":0.6}}, or the path of a file holding them.`,
      error,
    );
  }
  const parsed = priceTableSchema.safeParse(value);
  if (!parsed.success) throw pricesError(`${source}: ${zodIssues(parsed.error, 'the table')}.`);
  return parsed.data;
}

/** The setting the price table is read from, for the README's configuration table. */
export const modelPriceSettings = defineSettings({
  TROUPE_MODEL_PRICES: {
    key: 'modelPrices',
    // Read by modelPricesFromEnv, which reports its own code; this only documents it.
    schema: text,
    shown: `built-in (${PRICES_AS_OF})`,
    doc: 'Model prices in USD per million input and output tokens, for the usage ledger\'s cost estimates: JSON such as `{"openai:gpt-4o-mini":{"input":0.15,"output":0.6}}` (keys `provider:model`, or a bare model id for any provider), or the path of a file holding it. Overrides the built-in prices of common OpenAI and Anthropic models key by key; the offline model costs nothing.',
  },
});

/**
 * The price table of the environment: the built-in prices, overridden by `TROUPE_MODEL_PRICES`
 * (JSON, or the path of a JSON file; a value starting with `{` is JSON).
 * @throws TroupeError `TROUPE_MODEL_PRICES_INVALID` for JSON that is not a price table or a file
 * that cannot be read.
 */
export function modelPricesFromEnv(
  env: EnvRecord,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): ModelPrices {
  const raw = env.TROUPE_MODEL_PRICES?.trim() ?? '';
  if (raw === '') return builtInModelPrices;
  if (raw.startsWith('{')) return withOperatorPrices(parseModelPrices(raw));
  let content: string;
  try {
    content = readFile(raw);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : 'it cannot be read';
    throw pricesError(
      `TROUPE_MODEL_PRICES names the file ${JSON.stringify(raw)}, but ${reason}; give the path of a JSON price table, or the JSON itself.`,
      error,
    );
  }
  return withOperatorPrices(parseModelPrices(content, `TROUPE_MODEL_PRICES (file ${JSON.stringify(raw)})`));
}

/** The price of `model` (`provider:model`): its own key first, then its bare model id. */
export function priceOf(prices: ModelPrices, model: string): ModelPrice | undefined {
  return prices.get(model) ?? prices.get(modelIdOf(model));
}

/** True for a model of the offline provider (`offline`, `offline:scripted`), which costs nothing. */
export function isOfflineModel(model: string): boolean {
  return model === 'offline' || model.startsWith('offline:');
}

/**
 * The estimated cost in USD of one call of `model` (`provider:model`): tokens times the price per
 * million. 0 for the offline provider; `undefined` when the table has no price for the model.
 */
export function costOf(
  prices: ModelPrices,
  model: string,
  inputTokens: number,
  outputTokens: number,
): number | undefined {
  if (isOfflineModel(model)) return 0;
  const price = priceOf(prices, model);
  if (!price) return undefined;
  return (inputTokens * price.input + outputTokens * price.output) / 1_000_000;
}
