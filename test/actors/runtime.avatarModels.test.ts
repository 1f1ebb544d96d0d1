import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { modelFromEnv } from '../../src/adapters/llm/modelFromEnv.js';
import type { ModelChoiceInput } from '../../src/config/modelChoice.js';
import { createRuntime } from '../../src/createRuntime.js';
import { silentLogger } from '../../src/logging/logger.js';
import { isTroupeError } from '../../src/ports/troupeError.js';
import { createTestRuntime } from '../../src/testing/index.js';
import { type FakeOpenAiServer, startFakeOpenAiServer } from '../support/fakeOpenAiServer.js';
import { requestFor } from '../support/llmFixtures.js';

/** An avatar resident in the test room. */
const avatar = (id: string, name: string, model?: ModelChoiceInput) => ({
  id,
  name,
  residentIn: ['test:room'],
  ...(model !== undefined ? { model } : {}),
});

/** The error `run` throws, or a failure when it throws none. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('a model per avatar', () => {
  let server: FakeOpenAiServer;
  beforeAll(async () => {
    server = await startFakeOpenAiServer();
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.reset();
    server.respondWith((body) => ({ text: `written by ${body.model}` }));
  });

  /** The environment: an OpenAI-compatible default on the fake, an OpenAI key, and a profile on the fake. */
  const env = () => ({
    TROUPE_MODEL_BASE_URL: server.baseUrl,
    TROUPE_MODEL: 'default-model',
    TROUPE_MODEL_RETRIES: '0',
    OPENAI_API_KEY: 'sk-test-secret',
    TROUPE_MODEL_PROFILES: JSON.stringify({
      cheap: { provider: 'openai', model: 'cheap-model', baseUrl: server.baseUrl },
    }),
  });

  it("sends each avatar's turns with its own model, and the default for an avatar without one", async () => {
    const configured = modelFromEnv(env(), { logger: silentLogger() });
    const t = createTestRuntime({
      model: configured.model,
      models: configured.models,
      avatars: [
        avatar('nova', 'Nova', 'openai-compatible:nova-model'),
        avatar('rex', 'Rex', 'cheap'),
        avatar('ivy', 'Ivy'),
        avatar('max', 'Max', { provider: 'openai-compatible', id: 'default-model' }),
      ],
    });
    await t.say('Nova, hello');
    await t.advance(60_000);
    await t.say('Rex, hello');
    await t.advance(60_000);
    await t.say('Ivy, hello');
    await t.advance(60_000);
    await t.say('Max, hello');
    expect(server.chatRequests().map((body) => body.model)).toEqual([
      'nova-model',
      'cheap-model',
      'default-model',
      'default-model',
    ]);
    // The profile's provider is openai: its key went with its requests, and only with them.
    const auth = server.requests.map((r) => r.headers.authorization);
    expect(auth).toEqual([undefined, 'Bearer sk-test-secret', undefined, undefined]);
    expect(t.transport.texts()).toEqual([
      'written by nova-model',
      'written by cheap-model',
      'written by default-model',
      'written by default-model',
    ]);
    expect(t.runtime.modelOf('nova').id).toBe('openai-compatible:nova-model');
    expect(t.runtime.modelOf('rex').id).toBe('openai:cheap-model');
    expect(t.runtime.modelOf('ivy')).toBe(configured.model);
    // A choice that names the default model is the default model itself.
    expect(t.runtime.modelOf('max')).toBe(configured.model);
    await t.stop();
  });

  it('builds one model per distinct choice: avatars naming the same model share it', () => {
    const configured = modelFromEnv(env(), { logger: silentLogger() });
    const runtime = createRuntime({
      model: configured.model,
      models: configured.models,
      avatars: [avatar('nova', 'Nova', 'cheap'), avatar('rex', 'Rex', 'openai:cheap-model')],
      logger: silentLogger(),
    });
    // The profile and the provider:model with the same server differ in server: two models.
    expect(runtime.modelOf('nova')).not.toBe(runtime.modelOf('rex'));
    const again = createRuntime({
      model: configured.model,
      models: configured.models,
      avatars: [avatar('nova', 'Nova', 'cheap'), avatar('rex', 'Rex', 'cheap')],
      logger: silentLogger(),
    });
    expect(again.modelOf('nova')).toBe(again.modelOf('rex'));
    return Promise.all([runtime.stop(), again.stop()]);
  });

  it("models of one server share its concurrency limit with the environment's model", async () => {
    const configured = modelFromEnv({ ...env(), TROUPE_MODEL_CONCURRENCY: '1' }, { logger: silentLogger() });
    server.respondWith((body) => ({ text: `written by ${body.model}`, delayMs: 20 }));
    const own = configured.models('openai-compatible:nova-model');
    expect(own).not.toBe(configured.model);
    await Promise.all([
      configured.model.generateTurn(requestFor()),
      own.generateTurn(requestFor()),
      own.generateTurn(requestFor()),
    ]);
    expect(
      server
        .chatRequests()
        .map((b) => b.model)
        .sort(),
    ).toEqual(['default-model', 'nova-model', 'nova-model']);
    expect(server.maxInFlight).toBe(1);
  });

  it.each([
    ['an unknown provider', 'mistral:large', /unknown provider "mistral"/],
    [
      'an unknown profile',
      'fancy',
      /no provider or profile of that name.*profiles in TROUPE_MODEL_PROFILES: cheap/,
    ],
    [
      'a provider without its key',
      'anthropic:claude-3-5-haiku-latest',
      /anthropic needs its key: set ANTHROPIC_API_KEY/,
    ],
  ])('refuses %s at start, naming the avatar and the value', (_what, choice, why) => {
    const configured = modelFromEnv(env(), { logger: silentLogger() });
    const error = thrown(() =>
      createRuntime({
        model: configured.model,
        models: configured.models,
        avatars: [avatar('ivy', 'Ivy'), avatar('rex', 'Rex', choice)],
        logger: silentLogger(),
      }),
    );
    expect(isTroupeError(error) && error.code).toBe('TROUPE_AVATAR_MODEL_INVALID');
    const message = (error as Error).message;
    expect(message).toContain(`Avatar Rex (rex) has model "${choice}"`);
    expect(message).toMatch(why);
    expect(message).not.toContain('sk-test-secret');
    expect(server.requests).toEqual([]);
  });

  it('without a resolver, createRuntime builds only the offline model and refuses others naming the avatar', async () => {
    const offline = createRuntime({ avatars: [avatar('nova', 'Nova', 'offline')], logger: silentLogger() });
    expect(offline.modelOf('nova').offline).toBe(true);
    await offline.stop();
    const error = thrown(() =>
      createRuntime({ avatars: [avatar('nova', 'Nova', 'openai:gpt-4o-mini')], logger: silentLogger() }),
    );
    expect(isTroupeError(error) && error.code).toBe('TROUPE_AVATAR_MODEL_INVALID');
    expect((error as Error).message).toMatch(
      /^Avatar Nova \(nova\) has model "openai:gpt-4o-mini": .*pass `models`/,
    );
  });

  it('refuses a malformed model value as an invalid avatar definition', () => {
    const error = thrown(() =>
      createRuntime({ avatars: [avatar('nova', 'Nova', 'open ai')], logger: silentLogger() }),
    );
    expect(isTroupeError(error) && error.code).toBe('TROUPE_AVATARS_INVALID');
    expect((error as Error).message).toContain('avatars.0.model');
  });
});
