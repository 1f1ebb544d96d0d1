/**
 * A password written into a URL never reaches an error message, a cause, a log line or the
 * terminal, whoever built the error (an HTTP client quotes the URL it failed on).
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/configError.js';
import { createLogger } from '../../src/logging/logger.js';
import { hasUrlCredentials, redactCredentials, redactedError } from '../../src/ports/redactCredentials.js';
import { describe as describeError, TroupeError } from '../../src/ports/troupeError.js';

const SECRET = 'hunter2-secret';

describe('redactCredentials', () => {
  it('masks the user information of every URL in a text and keeps the host', () => {
    expect(
      redactCredentials(`GET http://user:${SECRET}@api.example/v1 failed, try https://${SECRET}@h2/x`),
    ).toBe('GET http://***@api.example/v1 failed, try https://***@h2/x');
    expect(redactCredentials(`mongodb+srv://admin:${SECRET}@cluster0.example/db`)).toBe(
      'mongodb+srv://***@cluster0.example/db',
    );
    expect(redactCredentials('mail me at a@b.example, see http://host/path@v2')).toBe(
      'mail me at a@b.example, see http://host/path@v2',
    );
    expect(hasUrlCredentials(redactCredentials(`http://u:${SECRET}@h`))).toBe(false);
  });

  it('masks the token of Discord webhook and interaction paths', () => {
    const token = 'aW5zZWN1cmUtd2ViaG9vay10b2tlbi1pbi1hLXBhdGgtdGhhdC1tdXN0LW5vdC1sZWFr';
    expect(
      redactCredentials(`POST https://discord.com/api/v10/webhooks/123456/${token}?wait=true failed`),
    ).toBe('POST https://discord.com/api/v10/webhooks/123456/***?wait=true failed');
    expect(redactCredentials(`/interactions/987/${token}/callback`)).toBe('/interactions/987/***/callback');
    expect(redactCredentials('GET /channels/1/webhooks')).toBe('GET /channels/1/webhooks');
  });

  it('keeps a Discord error’s URL token out of log lines', () => {
    let out = '';
    const logger = createLogger({
      level: 'info',
      destination: new Writable({
        write(chunk, _e, done) {
          out += String(chunk);
          done();
        },
      }),
    });
    const token = 'itok-0123456789abcdef0123456789abcdef';
    const error = Object.assign(new Error(`404: Not Found`), {
      url: `https://discord.com/api/v10/webhooks/900/${token}/messages/%40original`,
      method: 'PATCH',
    });
    logger.warn(
      { err: error, route: `/interactions/1/${token}/callback` },
      `failed on /webhooks/900/${token}`,
    );
    expect(out).toContain('/webhooks/900/***');
    expect(out).not.toContain(token);
  });

  it('leaves a library’s error alone and gives a redacted copy with its cause chain', () => {
    const inner = Object.assign(new TypeError(`fetch http://u:${SECRET}@h/v1 refused`), { code: 'E1' });
    const outer = new Error('call failed', { cause: inner });
    const copy = redactedError(outer) as Error & { cause: Error & { code: string } };
    expect(copy).not.toBe(outer);
    expect(inner.message).toContain(SECRET);
    expect(copy.cause.message).toBe('fetch http://***@h/v1 refused');
    expect(copy.cause.name).toBe('TypeError');
    expect(copy.cause.code).toBe('E1');
    expect(JSON.stringify([copy.stack, copy.cause.stack])).not.toContain(SECRET);
    const clean = new Error('nothing to hide');
    expect(redactedError(clean)).toBe(clean);
  });
});

describe('errors and logs', () => {
  it('TroupeError, ConfigError and describe() never carry a URL password', () => {
    const cause = new Error(`connect http://u:${SECRET}@h failed`);
    const error = new TroupeError('TROUPE_MODEL_FAILED', `model at http://u:${SECRET}@h failed`, { cause });
    expect(JSON.stringify([error.message, error.stack, (error.cause as Error).message])).not.toContain(
      SECRET,
    );
    const config = new ConfigError([{ variable: 'X_URL', value: `http://u:${SECRET}@h`, expected: 'a URL' }]);
    expect(JSON.stringify([config.message, config.problems])).not.toContain(SECRET);
    expect(describeError(cause)).not.toContain(SECRET);
  });

  it('the logger masks URL credentials in messages, fields and errors with their causes', () => {
    let out = '';
    const destination = new Writable({
      write(chunk, _encoding, done) {
        out += String(chunk);
        done();
      },
    });
    const logger = createLogger({ level: 'debug', destination });
    const cause = new TypeError(`Request cannot be constructed from http://u:${SECRET}@h/v1`);
    logger.warn(
      {
        err: new Error('call failed', { cause }),
        url: `http://u:${SECRET}@h`,
        nested: { list: [`redis://:${SECRET}@r`] },
      },
      `calling http://u:${SECRET}@h`,
    );
    logger.info(`plain http://u:${SECRET}@h/x`);
    logger.error({ apiKey: SECRET }, 'keys are redacted by path');
    logger.info({ at: new Date(0) }, 'dates stay dates');
    expect(out).toContain('http://***@h');
    expect(out).toContain('caused by');
    expect(out).not.toContain(SECRET);
    expect(out).toContain('"at":"1970-01-01T00:00:00.000Z"');
  });
});
