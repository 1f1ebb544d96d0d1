/**
 * The runtime's `logger` option takes the logger port, not pino's type: a logger of another kind,
 * written in a few lines, gets the runtime's lines with the fields its children bind.
 */
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/actors/clock.js';
import { createRuntime } from '../../src/createRuntime.js';
import { createLogger, silentLogger } from '../../src/logging/logger.js';
import type { Logger, LogMethod } from '../../src/ports/logger.js';
import { mockModel, RecordingTransport, settleOnClock } from '../../src/testing/index.js';

interface LogLine {
  level: string;
  fields: Record<string, unknown>;
  message: string | undefined;
}

/** A logger that is not pino: it keeps each line, with the bindings of the child that wrote it. */
function arrayLogger(lines: LogLine[], bindings: Record<string, unknown> = {}): Logger {
  const method =
    (level: string): LogMethod =>
    (fields: object | string, message?: string) => {
      if (typeof fields === 'string') lines.push({ level, fields: { ...bindings }, message: fields });
      else lines.push({ level, fields: { ...bindings, ...fields }, message });
    };
  return {
    debug: method('debug'),
    info: method('info'),
    warn: method('warn'),
    error: method('error'),
    child: (more) => arrayLogger(lines, { ...bindings, ...more }),
  };
}

describe('the logger port', () => {
  it('a runtime logs through a logger that is not pino, children included', async () => {
    const lines: LogLine[] = [];
    const clock = new SimulatedClock();
    const transport = new RecordingTransport();
    const runtime = createRuntime({
      avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }],
      model: mockModel('Hello.'),
      transports: [transport],
      clock,
      logger: arrayLogger(lines),
    });
    expect(lines).toContainEqual({
      level: 'info',
      fields: { model: 'mock:model' },
      message: 'language model configured',
    });
    transport.failNext({ code: 'TROUPE_TRANSPORT_FORBIDDEN', retryable: false });
    runtime.send({
      type: 'channel.message',
      channel: { kind: 'test', id: 'room' },
      messageId: 'm1',
      author: { kind: 'human', id: 'u1', name: 'Ada' },
      text: 'Nova, hello',
    });
    await settleOnClock(runtime, clock);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        fields: expect.objectContaining({ actor: 'routing', code: 'TROUPE_TRANSPORT_FORBIDDEN' }),
        message: 'send failed: injected failure',
      }),
    );
    await runtime.stop();
  });

  it('pino loggers are loggers of the port as they are', () => {
    const loggers: Logger[] = [
      createLogger({ level: 'silent' }),
      silentLogger(),
      silentLogger().child({ a: 1 }),
    ];
    for (const logger of loggers) expect(typeof logger.child({ actor: 'x' }).info).toBe('function');
  });
});
