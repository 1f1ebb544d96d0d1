/**
 * Fuzzing the boundaries where files and settings enter Troupe: scenario and avatars files (text,
 * and YAML built from fuzzed shapes), coordination and model settings from the environment, and
 * tool result envelopes. Each property says what a caller may count on whatever they pass: a
 * result, or a TroupeError with a stable code (one of `troupeErrorCodes`), never another exception.
 * Sized to run in seconds in CI; `FUZZ_RUNS=5000 npx vitest run test/fuzz` runs thousands.
 * (`runtime.send`/`connect`: test/fuzz/fuzz.runtime.test.ts; the entity lookup: test/fuzz/fuzz.lookup.test.ts.)
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify as yamlStringify } from 'yaml';
import { modelFromEnv } from '../../src/adapters/llm/modelFromEnv.js';
import { modelSettings } from '../../src/adapters/llm/modelSettings.js';
import { parseAvatarsText } from '../../src/cli/avatarsFile.js';
import { compose, parseEnvelope } from '../../src/composer/index.js';
import { coordinationSettings } from '../../src/config/coordinationConfig.js';
import { loadCoordinationConfig } from '../../src/config/coordinationFromEnv.js';
import { troupeErrorCodes } from '../../src/ports/errorCodes.js';
import { isTroupeError } from '../../src/ports/troupeError.js';
import { parseScenarioText } from '../../src/simulator/scenario.js';
import { fuzzRuns } from '../support/fuzzRuns.js';

/**
 * Calls `fn`; a thrown value must be a TroupeError with a stable code: one of `codes` when given,
 * else any code Troupe documents (for boundaries whose validation is still changing, so the
 * property holds whichever code a new rule picks).
 */
function resultOrTroupeError<T>(fn: () => T, codes: readonly string[] = troupeErrorCodes): T | undefined {
  try {
    return fn();
  } catch (error) {
    if (!isTroupeError(error)) throw new Error(`not a TroupeError: ${String(error)}`, { cause: error });
    expect(codes).toContain(error.code);
    expect(error.message.trim()).not.toBe('');
    return undefined;
  }
}

/** Strings with the characters that break parsers and terminals: controls, quotes, YAML syntax. */
const nasty = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u001b[2J',
    '*a',
    '&a [*a, *a]',
    '{',
    '- - -',
    '!!binary xx',
    '9'.repeat(309),
    '600h',
    '-1',
    'NaN',
    '0x10',
    '1e400',
    '__proto__',
    'constructor',
  ),
);

/** YAML documents built from fuzzed values, as well as raw text. */
const yamlish = (shape: fc.Arbitrary<unknown>) =>
  fc.oneof(
    fc.string({ maxLength: 200 }),
    shape.map((value) => {
      try {
        return yamlStringify(value) ?? '';
      } catch {
        return '';
      }
    }),
  );

describe('scenario and avatars files', () => {
  const avatarShape = fc.record({
    id: nasty,
    name: nasty,
    aliases: fc.array(nasty, { maxLength: 3 }),
    emoji: nasty,
    topics: fc.array(nasty, { maxLength: 3 }),
    residentIn: fc.array(nasty, { maxLength: 2 }),
  });

  it('an avatars file gives avatars or a TroupeError with a stable code, never another exception', () => {
    fc.assert(
      fc.property(
        yamlish(fc.oneof(fc.record({ avatars: fc.array(avatarShape, { maxLength: 3 }) }), fc.anything())),
        (text) => {
          resultOrTroupeError(() => parseAvatarsText(text, 'fuzz.yaml'));
        },
      ),
      { numRuns: fuzzRuns(300) },
    );
  });

  it('a scenario file gives a scenario or a TROUPE_SCENARIO_* error, never another exception', () => {
    const scenarioShape = fc.record({
      name: nasty,
      avatars: fc.array(avatarShape, { maxLength: 3 }),
      humans: fc.array(fc.record({ id: nasty, name: nasty }), { maxLength: 2 }),
      config: fc.dictionary(fc.constantFrom(...Object.keys(coordinationSettings)), nasty, { maxKeys: 3 }),
      script: fc.array(
        fc.record(
          { at: nasty, after: nasty, human: nasty, say: nasty, wait: nasty, summon: nasty },
          {
            requiredKeys: [],
          },
        ),
        { maxLength: 3 },
      ),
    });
    fc.assert(
      fc.property(yamlish(fc.oneof(scenarioShape, fc.anything())), (text) => {
        resultOrTroupeError(
          () => parseScenarioText(text, 'fuzz.yaml'),
          ['TROUPE_SCENARIO_SYNTAX', 'TROUPE_SCENARIO_INVALID'],
        );
      }),
      { numRuns: fuzzRuns(300) },
    );
  });
});

/** An environment: the settings' own variables with fuzzed values, now and then an unrelated one. */
const envOf = (names: readonly string[]) =>
  fc.dictionary(
    fc.oneof({ arbitrary: fc.constantFrom(...names), weight: 9 }, fc.string({ maxLength: 12 })),
    nasty,
  );

describe('environment configuration', () => {
  const finiteEverywhere = (value: unknown): void => {
    if (typeof value === 'number') expect(Number.isFinite(value)).toBe(true);
    else if (value && typeof value === 'object') for (const v of Object.values(value)) finiteEverywhere(v);
  };

  it('coordination knobs give a config of finite numbers or a TroupeError with a stable code', () => {
    fc.assert(
      fc.property(envOf(Object.keys(coordinationSettings)), (env) => {
        const config = resultOrTroupeError(() => loadCoordinationConfig(env));
        if (config) finiteEverywhere(config);
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it('model settings give a model of finite numbers or a TroupeError with a stable code, and never echo a key', () => {
    const secret = 'sk-FUZZ-SECRET-1234';
    fc.assert(
      fc.property(envOf(Object.keys(modelSettings)), (env) => {
        const withKey = { ...env, TROUPE_MODEL_API_KEY: secret };
        try {
          const { config } = modelFromEnv(withKey);
          finiteEverywhere(config);
        } catch (error) {
          expect(isTroupeError(error) && troupeErrorCodes.includes(error.code)).toBe(true);
          expect(String((error as Error).message)).not.toContain(secret);
        }
      }),
      { numRuns: fuzzRuns(300) },
    );
  });
});

describe('tool result envelopes', () => {
  const cell = fc.oneof(
    nasty,
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom('2026-11-25T10:00:00+00:30', '@everyone', '<@123>', '9'.repeat(400)),
  );
  const attempts = fc.record({ exact: fc.boolean(), fuzzy: fc.boolean(), schema_refreshed: fc.boolean() });
  const query = fc.record(
    { entity_type: nasty, entity_name: nasty, order_number: nasty },
    { requiredKeys: ['entity_type'] },
  );
  /** Envelopes the schema takes, with fuzzed column names, values and candidates. */
  const validEnvelope = fc.oneof(
    fc.record({
      type: fc.constant('success'),
      source: fc.constantFrom('database', 'doc', 'action'),
      query,
      rows: fc.array(fc.dictionary(nasty, cell, { maxKeys: 8 }), { minLength: 1, maxLength: 30 }),
      total_rows: fc.nat(),
      match: fc.constantFrom('exact', 'fuzzy'),
      attempts,
    }),
    fc.record({
      type: fc.constant('disambiguation'),
      source: fc.constant('database'),
      query,
      candidates: fc.array(
        fc.record(
          { id: fc.oneof(nasty, fc.integer()), display_name: nasty, city: nasty },
          { requiredKeys: ['id', 'display_name'] },
        ),
        { minLength: 1, maxLength: 30 },
      ),
      candidates_total: fc.nat(),
      attempts,
    }),
    fc.record({ type: fc.constant('empty'), source: fc.constant('database'), query, attempts }),
    fc.record({
      type: fc.constant('error'),
      source: fc.constant('database'),
      query,
      attempts,
      error: fc.record({ code: nasty.filter((c) => c !== ''), message: nasty, retryable: fc.boolean() }),
    }),
  );
  const envelopeShape = fc.record(
    {
      type: fc.oneof(fc.constantFrom('success', 'disambiguation', 'empty', 'error'), nasty),
      source: fc.oneof(fc.constantFrom('database', 'doc', 'action'), nasty),
      query: fc.oneof(fc.dictionary(nasty, fc.oneof(nasty, fc.integer())), nasty),
      rows: fc.array(fc.dictionary(nasty, fc.jsonValue({ maxDepth: 2 })), { maxLength: 4 }),
      candidates: fc.array(fc.dictionary(nasty, fc.oneof(nasty, fc.integer())), { maxLength: 4 }),
      attempts: fc.dictionary(nasty, fc.oneof(fc.boolean(), nasty)),
      error: fc.dictionary(nasty, fc.oneof(nasty, fc.boolean())),
    },
    { requiredKeys: [] },
  );

  it('parse to an envelope or TROUPE_ENVELOPE_INVALID, and always compose to a reply (never the catch-all)', () => {
    fc.assert(
      fc.property(fc.oneof(validEnvelope, envelopeShape, fc.jsonValue(), fc.anything()), (input) => {
        const parsed = parseEnvelope(input);
        const reply = compose(input);
        expect(reply.text.trim()).not.toBe('');
        // compose() has a last-resort catch; landing in it means a composer bug, not bad input.
        expect(reply.counters).not.toContain('compose_failed');
        if (parsed.ok) expect(reply.telemetry.response_mode).toBe(parsed.envelope.type);
        else {
          expect(parsed.error.code).toBe('TROUPE_ENVELOPE_INVALID');
          expect(reply.counters).toContain('envelope_invalid');
        }
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it('an envelope the schema takes always parses and composes to a reply of its own kind', () => {
    fc.assert(
      fc.property(validEnvelope, (input) => {
        const parsed = parseEnvelope(input);
        expect(parsed.ok).toBe(true);
        expect(compose(input).telemetry.response_mode).toBe(input.type);
      }),
      { numRuns: fuzzRuns(200) },
    );
  });
});
