import { describe, expect, it } from 'vitest';
import { modelFromEnv } from '../../../src/adapters/llm/modelFromEnv.js';
import { modelSettings } from '../../../src/adapters/llm/modelSettings.js';
import { SCRIPTED_MODEL_ID } from '../../../src/adapters/llm/scriptedModel.js';
import { ConfigError } from '../../../src/config/configError.js';

function configError(env: Record<string, string>): ConfigError {
  try {
    modelFromEnv(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('modelFromEnv', () => {
  it('falls back to the offline scripted model when nothing is configured', () => {
    const { model, description, config, languageModel } = modelFromEnv({});
    expect(model).toMatchObject({ id: SCRIPTED_MODEL_ID, offline: true });
    expect(description).toMatch(/^offline scripted replies \(no model configured; set OPENAI_API_KEY/);
    expect(config).toEqual({ provider: 'offline', timeoutMs: 30_000, maxRetries: 2, concurrency: 4 });
    expect(languageModel).toBeUndefined();
  });

  it('treats blank variables as unset', () => {
    expect(modelFromEnv({ OPENAI_API_KEY: '  ', TROUPE_MODEL_BASE_URL: '' }).model.offline).toBe(true);
  });

  it('infers openai from OPENAI_API_KEY, with defaults', () => {
    const { model, description, config } = modelFromEnv({ OPENAI_API_KEY: 'sk-secret-openai' });
    expect(model).toMatchObject({ id: 'openai:gpt-4o-mini', offline: false });
    expect(description).toBe('openai gpt-4o-mini (timeout 30s, 2 retries, 4 at once)');
    expect(config).toEqual({
      provider: 'openai',
      modelId: 'gpt-4o-mini',
      timeoutMs: 30_000,
      maxRetries: 2,
      concurrency: 4,
      apiKeyVariable: 'OPENAI_API_KEY',
    });
    expect(JSON.stringify(config)).not.toContain('sk-secret');
  });

  it('infers anthropic from ANTHROPIC_API_KEY', () => {
    const { model } = modelFromEnv({ ANTHROPIC_API_KEY: 'sk-ant-secret' });
    expect(model.id).toBe('anthropic:claude-3-5-haiku-latest');
  });

  it('prefers an OpenAI-compatible server when TROUPE_MODEL_BASE_URL is set', () => {
    const { model, description, config } = modelFromEnv({
      TROUPE_MODEL_BASE_URL: 'http://localhost:11434/v1/',
      TROUPE_MODEL: 'llama3.2',
      OPENAI_API_KEY: 'sk-not-sent-to-other-servers',
      TROUPE_MODEL_TIMEOUT: '2m',
      TROUPE_MODEL_RETRIES: '1',
      TROUPE_MODEL_CONCURRENCY: '8',
    });
    expect(model.id).toBe('openai-compatible:llama3.2');
    expect(description).toBe(
      'openai-compatible llama3.2 at http://localhost:11434/v1 (timeout 2m, 1 retry, 8 at once)',
    );
    expect(config).toMatchObject({
      baseUrl: 'http://localhost:11434/v1',
      timeoutMs: 120_000,
      concurrency: 8,
    });
  });

  it('refuses a base URL with a user or password in it (fetch cannot send them), masking them', () => {
    expect(() =>
      modelFromEnv({ TROUPE_MODEL_BASE_URL: 'http://user:pw-secret@localhost:11434/v1', TROUPE_MODEL: 'x' }),
    ).toThrow(
      /TROUPE_MODEL_BASE_URL="http:\/\/\*\*\*@localhost:11434\/v1" is not allowed.*TROUPE_MODEL_API_KEY/su,
    );
  });

  it('uses an explicit provider over inference, and TROUPE_MODEL as the model name', () => {
    const env = { OPENAI_API_KEY: 'k1', ANTHROPIC_API_KEY: 'k2', TROUPE_MODEL: 'claude-sonnet-4-5' };
    expect(modelFromEnv({ ...env, TROUPE_MODEL_PROVIDER: 'Anthropic' }).model.id).toBe(
      'anthropic:claude-sonnet-4-5',
    );
    const offline = modelFromEnv({ ...env, TROUPE_MODEL_PROVIDER: 'offline' });
    expect(offline.model.offline).toBe(true);
    expect(offline.description).toContain('TROUPE_MODEL_PROVIDER=offline');
  });

  it('names every bad variable in one ConfigError', () => {
    const error = configError({
      TROUPE_MODEL_PROVIDER: 'gemini',
      TROUPE_MODEL_TIMEOUT: 'soon',
      TROUPE_MODEL_RETRIES: '-1',
      TROUPE_MODEL_CONCURRENCY: '0',
      TROUPE_MODEL_BASE_URL: 'localhost:11434',
    });
    expect(error.code).toBe('TROUPE_CONFIG_INVALID');
    expect(error.problems.map((p) => p.variable).sort()).toEqual([
      'TROUPE_MODEL_BASE_URL',
      'TROUPE_MODEL_CONCURRENCY',
      'TROUPE_MODEL_PROVIDER',
      'TROUPE_MODEL_RETRIES',
      'TROUPE_MODEL_TIMEOUT',
    ]);
    expect(error.message).toContain('TROUPE_MODEL_PROVIDER="gemini" is not allowed; expected one of openai');
    expect(error.message).toContain('TROUPE_MODEL_TIMEOUT="soon"');
  });

  it('rejects a zero timeout', () => {
    expect(configError({ TROUPE_MODEL_TIMEOUT: '0s' }).problems[0]?.variable).toBe('TROUPE_MODEL_TIMEOUT');
  });

  it('rejects a timeout longer than a timer can wait (600h would fail every call at once), naming the range', () => {
    for (const value of ['600h', '2147483648', '9'.repeat(309)]) {
      const error = configError({ TROUPE_MODEL_TIMEOUT: value });
      expect(error.problems[0]?.variable).toBe('TROUPE_MODEL_TIMEOUT');
      expect(error.message).toContain('at most 596h (2147483647 ms');
    }
    expect(() => modelFromEnv({ TROUPE_MODEL_TIMEOUT: '596h', OPENAI_API_KEY: 'k' })).not.toThrow();
  });

  it('asks for what a chosen provider needs', () => {
    const compatible = configError({ TROUPE_MODEL_PROVIDER: 'openai-compatible' });
    expect(compatible.problems.map((p) => p.variable)).toEqual(['TROUPE_MODEL_BASE_URL', 'TROUPE_MODEL']);
    expect(configError({ TROUPE_MODEL_BASE_URL: 'http://localhost:8000/v1' }).problems[0]?.variable).toBe(
      'TROUPE_MODEL',
    );
    expect(configError({ TROUPE_MODEL_PROVIDER: 'openai' }).problems[0]?.variable).toBe('OPENAI_API_KEY');
    expect(configError({ TROUPE_MODEL_PROVIDER: 'anthropic' }).problems[0]?.variable).toBe(
      'ANTHROPIC_API_KEY',
    );
  });

  it('documents every variable it reads, with a shown default', () => {
    for (const [variable, setting] of Object.entries(modelSettings)) {
      expect(variable).toMatch(/^[A-Z_]+$/);
      expect(setting.doc.length).toBeGreaterThan(10);
      expect(setting.shown).not.toBe('');
    }
    expect(modelSettings.TROUPE_MODEL_TIMEOUT.default).toBe(30_000);
    expect(modelSettings.OPENAI_API_KEY.secret).toBe(true);
  });
});

describe('the models avatars name, from the environment', () => {
  it('reads TROUPE_MODEL_PROFILES and refuses a malformed one naming the profile and field', () => {
    expect(configError({ TROUPE_MODEL_PROFILES: '{cheap' }).message).toMatch(
      /TROUPE_MODEL_PROFILES.*a JSON object of profiles/su,
    );
    const bad = configError({
      TROUPE_MODEL_PROFILES: JSON.stringify({
        cheap: { provider: 'mistral', model: 'x' },
        local: { provider: 'openai-compatible' },
        'a:b': { provider: 'offline' },
      }),
    }).message;
    expect(bad).toContain('cheap.provider: openai, anthropic, openai-compatible or offline');
    expect(bad).toContain('local.model: required for openai-compatible');
    expect(bad).toContain('a:b');
  });

  it('builds each choice once, reuses the default model, and gives the offline model for offline', () => {
    const env = {
      OPENAI_API_KEY: 'sk-test-secret',
      TROUPE_MODEL_PROFILES: JSON.stringify({ fast: { provider: 'openai', model: 'gpt-4o' } }),
    };
    const { model, models } = modelFromEnv(env);
    expect(models('openai:gpt-4o-mini')).toBe(model);
    expect(models('fast').id).toBe('openai:gpt-4o');
    expect(models('fast')).toBe(models('openai:gpt-4o'));
    expect(models('offline').offline).toBe(true);
    expect(() => models('openai-compatible:llama3.2')).toThrow(/openai-compatible needs a server/);
    expect(() => models('fastest')).toThrow(/profiles in TROUPE_MODEL_PROFILES: fast/);
  });

  it('splits a choice at its first colon: a model id may hold more', () => {
    const { models } = modelFromEnv({ TROUPE_MODEL_BASE_URL: 'http://127.0.0.1:9/v1', TROUPE_MODEL: 'x' });
    expect(models('openai-compatible:llama3.2:3b').id).toBe('openai-compatible:llama3.2:3b');
  });
});
