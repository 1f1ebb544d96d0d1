import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/configError.js';
import { resolveCoordinationConfig } from '../../src/config/coordinationFromEnv.js';
import { createRuntime } from '../../src/createRuntime.js';
import { FloorSnapshotError } from '../../src/floor/floorSnapshotSchema.js';
import { silentLogger } from '../../src/logging/logger.js';
import { troupeErrorCodes } from '../../src/ports/errorCodes.js';
import { TransportError } from '../../src/ports/transport.js';
import { describe as describeError, isTroupeError, TroupeError } from '../../src/ports/troupeError.js';
import { ScenarioError } from '../../src/simulator/scenario.js';

describe('one error model', () => {
  it('every error class is a TroupeError with a code from the one list', () => {
    const errors = [
      new TroupeError('TROUPE_EVENT_INVALID', 'bad event'),
      new TransportError('TROUPE_TRANSPORT_RATE_LIMITED', 'slow down', {
        retryable: true,
        retryAfterMs: 500,
      }),
      new ConfigError([{ variable: 'X', value: 'y', expected: 'z' }]),
      new FloorSnapshotError('test:1', 'damaged'),
      new ScenarioError('TROUPE_SCENARIO_INVALID', 'a.yaml', [{ path: 'script', message: 'bad' }]),
    ];
    for (const error of errors) {
      expect(TroupeError.isInstance(error)).toBe(true);
      expect(error).toBeInstanceOf(TroupeError);
      expect(troupeErrorCodes).toContain(error.code);
    }
    expect(TransportError.isInstance(errors[1])).toBe(true);
    expect(TransportError.isInstance(errors[0])).toBe(false);
    expect(ConfigError.isInstance(errors[2])).toBe(true);
    expect(ConfigError.isInstance(errors[3])).toBe(false);
  });

  it('codes are unique and all TROUPE_-prefixed', () => {
    expect(new Set(troupeErrorCodes).size).toBe(troupeErrorCodes.length);
    for (const code of troupeErrorCodes) expect(code).toMatch(/^TROUPE_[A-Z_]+$/);
  });

  it('recognises errors made by another copy of the package, and nothing else', async () => {
    // A query string makes the module load a second time: a duplicated copy, as two installs give.
    const copyPath = '../../src/ports/transport.ts?copy';
    const copy = (await import(/* @vite-ignore */ copyPath)) as typeof import('../../src/ports/transport.js');
    const foreign = new copy.TransportError('TROUPE_TRANSPORT_UNAVAILABLE', 'down', { retryable: true });
    expect(copy.TransportError).not.toBe(TransportError);
    expect(foreign instanceof TransportError).toBe(false);
    expect(TransportError.isInstance(foreign)).toBe(true);
    expect(isTroupeError(foreign)).toBe(true);
    const lookalike = Object.assign(new Error('x'), { code: 'TROUPE_EVENT_INVALID', retryable: false });
    expect(isTroupeError(lookalike)).toBe(false);
    expect(isTroupeError({ code: 'TROUPE_EVENT_INVALID' })).toBe(false);
  });

  it('keeps the cause for logs, and describe() gives one line for anything thrown', () => {
    const cause = new Error('socket hang up');
    const error = new TroupeError('TROUPE_STORE_UNAVAILABLE', 'The store is away.', {
      retryable: true,
      cause,
    });
    expect(error.cause).toBe(cause);
    expect(error.toJSON()).toEqual({
      code: 'TROUPE_STORE_UNAVAILABLE',
      message: 'The store is away.',
      retryable: true,
    });
    expect(describeError(cause)).toBe('socket hang up');
    expect(describeError('plain')).toBe('plain');
    expect(describeError({ status: 500 })).toBe('{"status":500}');
  });
});

describe('createRuntime({ config }) validates like the environment', () => {
  const avatars = [{ id: 'luna', name: 'Luna' }];

  it('accepts durations as the environment writes them', async () => {
    expect(resolveCoordinationConfig({ threadTtlMs: '3m', threadOverrideCooldown: 'off' })).toMatchObject({
      threadTtlMs: 180_000,
      threadOverrideCooldown: false,
    });
    const runtime = createRuntime({
      avatars,
      config: { threadTtlMs: '3m', maxResponsesPerMessage: 2 },
      logger: silentLogger(),
    });
    await runtime.stop();
  });

  it('names every bad or unknown setting in one ConfigError', () => {
    let caught: unknown;
    try {
      createRuntime({
        avatars,
        config: { threadTtlMs: 'soon', maxResponsesPerMessage: 0, threadTTL: 5 } as never,
        logger: silentLogger(),
      });
    } catch (error) {
      caught = error;
    }
    expect(ConfigError.isInstance(caught)).toBe(true);
    const error = caught as ConfigError;
    expect(error.code).toBe('TROUPE_CONFIG_INVALID');
    expect(error.problems.map((p) => p.variable)).toEqual([
      'config.threadTtlMs (CONVERSATION_THREAD_TTL)',
      'config.maxResponsesPerMessage (MAX_RESPONSES_PER_MESSAGE)',
      'config.threadTTL',
    ]);
    expect(error.message).toContain('a duration such as 180000, 180s, 3m or 1h');
  });
});

describe('the error docs', () => {
  it('name every code', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    expect(troupeErrorCodes.filter((code) => !doc.includes(`\`${code}\``))).toEqual([]);
  });
});
