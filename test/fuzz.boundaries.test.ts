/**
 * Fuzzing at every boundary where outside input enters Troupe: the runtime's `send` and
 * `connect`, scenario and avatars files, environment configuration and tool result envelopes.
 * Each property says what a caller may count on whatever they pass: a result, or a TroupeError
 * with a stable code, never another exception, and the runtime keeps working afterwards. Sized to
 * run in seconds in CI; `FUZZ_RUNS=5000 npx vitest run test/fuzz` runs thousands.
 * (The entity lookup's fuzzing lives with its database in test/entityLookup.test.ts.)
 */
import fc from 'fast-check';
import { Subject } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify as yamlStringify } from 'yaml';
import { modelFromEnv } from '../src/adapters/llm/modelFromEnv.js';
import { modelSettings } from '../src/adapters/llm/modelSettings.js';
import { parseAvatarsText } from '../src/cli/avatarsFile.js';
import { compose, parseEnvelope } from '../src/composer/index.js';
import { ConfigError } from '../src/config/configError.js';
import { coordinationSettings } from '../src/config/coordinationConfig.js';
import { loadCoordinationConfig } from '../src/config/loadCoordinationConfig.js';
import { isTroupeError } from '../src/ports/troupeError.js';
import { parseScenarioText } from '../src/simulator/scenario.js';
import { createTestRuntime } from '../src/testing/index.js';
import { fuzzRuns } from './support/fuzzRuns.js';

/** Calls `fn`; a thrown value must be a TroupeError with one of `codes`. */
function resultOrTroupeError<T>(fn: () => T, codes: readonly string[]): T | undefined {
  try {
    return fn();
  } catch (error) {
    if (!isTroupeError(error)) throw new Error(`not a TroupeError: ${String(error)}`, { cause: error });
    expect(codes).toContain(error.code);
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

/**
 * Objects that fight being read: throwing getters, Proxies with throwing traps, cycles. Made
 * inside the property (fast-check itself would trip over a Proxy while recording it), so the
 * arbitrary yields a maker.
 */
const hostile = fc.oneof(
  fc.constant(() => {
    const cyclic: Record<string, unknown> = { type: 'channel.message' };
    cyclic.self = cyclic;
    cyclic.channel = cyclic;
    return cyclic;
  }),
  fc.string({ maxLength: 12 }).map(
    (key) => () =>
      Object.defineProperty({ type: 'channel.message' }, key || 'text', {
        enumerable: true,
        get() {
          throw new Error('getter');
        },
      }),
  ),
  fc.constantFrom('get', 'ownKeys', 'has', 'getOwnPropertyDescriptor', 'getPrototypeOf').map(
    (trap) => () =>
      new Proxy(
        { type: 'channel.message', channel: { kind: 'test', id: 'room' }, messageId: 'p', text: 'x' },
        {
          [trap]: () => {
            throw new Error(`trap ${trap}`);
          },
        },
      ),
  ),
);

/** The value to send: made now when the arbitrary gave a maker. */
const made = (input: unknown): unknown => (typeof input === 'function' ? (input as () => unknown)() : input);

/** Events that look almost right: the real shape with fuzzed fields. */
const nearlyEvents = fc.record(
  {
    type: fc.constantFrom('channel.message', 'avatar.summon', 'avatar.dismiss', 'channel.join', 'nonsense'),
    channel: fc.oneof(
      fc.record({ kind: nasty, id: nasty }),
      nasty,
      fc.constant({ kind: 'test', id: 'room' }),
    ),
    messageId: fc.oneof(nasty, fc.integer()),
    author: fc.oneof(
      fc.record({ kind: fc.constantFrom('human', 'avatar', 'bot', 'x'), id: nasty, name: nasty }),
      nasty,
    ),
    text: fc.oneof(nasty, fc.string({ maxLength: 2000 })),
    avatarId: fc.oneof(fc.constantFrom('nova', 'rex'), nasty),
    mentions: fc.array(nasty, { maxLength: 3 }),
  },
  { requiredKeys: ['type'] },
);

const anyInput = fc.oneof(fc.anything(), hostile, nearlyEvents);

describe('runtime.send and runtime.connect', () => {
  const t = createTestRuntime({
    retain: 50,
    avatars: [
      { id: 'nova', name: 'Nova', residentIn: ['test:room'] },
      { id: 'rex', name: 'Rex' },
    ],
  });
  afterAll(async () => {
    await t.stop();
  });

  it('never throw: anything is accepted or refused with a typed error, and the runtime still answers', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(anyInput, { maxLength: 5 }), async (inputs) => {
        for (const input of inputs) {
          const result = t.runtime.send(made(input) as never);
          // Refused with a typed error: malformed, or well-formed but naming no known avatar.
          if (!result.accepted)
            expect(['TROUPE_EVENT_INVALID', 'TROUPE_AVATAR_UNKNOWN']).toContain(result.error.code);
        }
        await t.settle();
      }),
      { numRuns: fuzzRuns(150) },
    );
    // Through connect(): the stream stays open past every bad value.
    const events$ = new Subject<unknown>();
    const subscription = t.runtime.connect(events$);
    fc.assert(
      fc.property(anyInput, (input) => {
        events$.next(made(input));
        expect(subscription.closed).toBe(false);
      }),
      { numRuns: fuzzRuns(150) },
    );
    subscription.unsubscribe();
    await t.settle();
    // And a person is still answered (Nova summoned back, in case the fuzz dismissed her).
    await t.advance(10 * 60_000);
    const answered: string[] = [];
    const watch = t.runtime.outcomes$.subscribe((o) => {
      if (o.sent && o.origin.triggerMessageId !== undefined) answered.push(o.origin.triggerMessageId);
    });
    await t.summon('nova');
    await t.say('Nova, are you still with us?', { messageId: 'after-fuzz' });
    await t.advance(60_000);
    watch.unsubscribe();
    expect(answered).toContain('after-fuzz');
  }, 60_000);
});

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

  it('an avatars file gives avatars or TROUPE_AVATARS_INVALID, never another exception', () => {
    fc.assert(
      fc.property(
        yamlish(fc.oneof(fc.record({ avatars: fc.array(avatarShape, { maxLength: 3 }) }), fc.anything())),
        (text) => {
          const avatars = resultOrTroupeError(
            () => parseAvatarsText(text, 'fuzz.yaml'),
            ['TROUPE_AVATARS_INVALID'],
          );
          for (const a of avatars ?? []) expect(a.name.trim()).not.toBe('');
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

describe('environment configuration', () => {
  const finiteEverywhere = (value: unknown): void => {
    if (typeof value === 'number') expect(Number.isFinite(value)).toBe(true);
    else if (value && typeof value === 'object') for (const v of Object.values(value)) finiteEverywhere(v);
  };

  it('coordination knobs give a config of finite numbers or a ConfigError', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...Object.keys(coordinationSettings)), nasty), (env) => {
        const config = resultOrTroupeError(() => loadCoordinationConfig(env), ['TROUPE_CONFIG_INVALID']);
        if (config) finiteEverywhere(config);
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it('model settings give a model or a ConfigError, and never echo a key', () => {
    const secret = 'sk-FUZZ-SECRET-1234';
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...Object.keys(modelSettings)), nasty), (env) => {
        const withKey = { ...env, TROUPE_MODEL_API_KEY: secret };
        try {
          const { config } = modelFromEnv(withKey);
          finiteEverywhere(config);
        } catch (error) {
          expect(ConfigError.isInstance(error)).toBe(true);
          expect(String((error as Error).message)).not.toContain(secret);
        }
      }),
      { numRuns: fuzzRuns(300) },
    );
  });
});

describe('tool result envelopes', () => {
  it('parse to an envelope or TROUPE_ENVELOPE_INVALID, and always compose to a reply', () => {
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
    fc.assert(
      fc.property(fc.oneof(envelopeShape, fc.jsonValue()), (input) => {
        const parsed = parseEnvelope(input);
        if (!parsed.ok) expect(parsed.error.code).toBe('TROUPE_ENVELOPE_INVALID');
        const reply = compose(input);
        expect(reply.text.trim()).not.toBe('');
      }),
      { numRuns: fuzzRuns(300) },
    );
  });
});
