/**
 * What an operator reads in the log about deliveries: failures and retries with the reply's key
 * and error code, outbox trouble, recovery and speech falling back to text.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { MemoryOutbox } from '../../src/adapters/store/memory/memoryOutbox.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { createLogger } from '../../src/logging/logger.js';
import { TroupeError } from '../../src/ports/troupeError.js';
import { RecordingTransport } from '../../src/testing/recordingTransport.js';
import { drive, responseOf, routingWith } from '../support/routingHarness.js';

interface Line {
  level: number;
  msg: string;
  key?: string;
  code?: string;
  count?: number;
  attempt?: number;
  delayMs?: number;
  err?: { message?: string };
}

function capturedLogger() {
  const lines: Line[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: new Writable({
      write(chunk, _encoding, done) {
        for (const text of String(chunk).split('\n')) if (text.trim()) lines.push(JSON.parse(text) as Line);
        done();
      },
    }),
  });
  return { logger, lines };
}

const WARN = 40;
const ERROR = 50;

describe('the delivery log', () => {
  it('a failed send: each retry with its wait, then a warning with the key and code', async () => {
    const { logger, lines } = capturedLogger();
    const transport = new RecordingTransport().failNext({ times: 5, retryAfterMs: 2_000 });
    const { routing, clock } = routingWith([transport], { logger, retry: { maxAttempts: 2 } });
    await drive(clock, routing.route(responseOf('r1', 'hello')));
    expect(lines).toContainEqual(
      expect.objectContaining({
        msg: 'send failed; retrying',
        key: 'r1#0',
        attempt: 1,
        delayMs: 2_000,
        code: 'TROUPE_TRANSPORT_UNAVAILABLE',
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: WARN,
        msg: 'send failed: injected failure (after 2 attempts)',
        key: 'r1',
        code: 'TROUPE_TRANSPORT_UNAVAILABLE',
      }),
    );
  });

  it('a reply already settled is noted as not sent again', async () => {
    const { logger, lines } = capturedLogger();
    const { routing } = routingWith([new RecordingTransport()], { logger });
    await routing.route(responseOf('dup', 'hello'));
    await routing.route(responseOf('dup', 'hello'));
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'response already settled; not sending again', key: 'dup' }),
    );
  });

  it('an outbox that cannot note a part or settle is warned about, with the reason', async () => {
    const { logger, lines } = capturedLogger();
    const outbox = new MemoryOutbox();
    outbox.markPartSent = async () => {
      throw new Error('disk full');
    };
    outbox.settle = async () => {
      throw new Error('disk gone');
    };
    // Two parts: the first is noted on its own, the last with the settlement.
    const { routing } = routingWith([new RecordingTransport({ limits: { maxTextLength: 200 } })], {
      logger,
      outbox,
    });
    await routing.route(responseOf('k', 'hello there. '.repeat(20)));
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: WARN,
        msg: 'outbox could not note a sent part',
        key: 'k',
        err: expect.objectContaining({ message: 'disk full' }),
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: WARN,
        msg: 'outbox could not settle an entry',
        key: 'k',
        err: expect.objectContaining({ message: 'disk gone' }),
      }),
    );
  });

  it('an outbox that answers at once and cannot settle is warned about; the reply stands', async () => {
    const { logger, lines } = capturedLogger();
    const { outbox } = createMemoryStore();
    (outbox.immediate as { settle: unknown }).settle = () => {
      throw new Error('disk gone');
    };
    const { routing } = routingWith([new RecordingTransport()], { logger, outbox });
    expect(await routing.route(responseOf('now', 'hello'))).toMatchObject({ sent: true });
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: WARN,
        msg: 'outbox could not settle an entry',
        key: 'now',
        err: expect.objectContaining({ message: 'disk gone' }),
      }),
    );
  });

  it('a delivery that failed unexpectedly is an error with the reason; an outbox that cannot settle it, a warning', async () => {
    for (const fail of [
      () => {
        throw new Error('disk gone');
      },
      async () => {
        throw new Error('disk gone');
      },
    ]) {
      const { logger, lines } = capturedLogger();
      const outbox = new MemoryOutbox();
      outbox.settle = fail as never;
      const transport = new RecordingTransport({ limits: { maxTextLength: 40 } });
      const { routing } = routingWith([transport], { logger, outbox });
      (transport.limits as { maxTextLength: number }).maxTextLength = 5;
      await routing.route(responseOf('odd', 'hello'));
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: ERROR,
          key: 'odd',
          msg: expect.stringMatching(/^delivery failed: A transport's text limit must be a whole number/u),
        }),
      );
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: WARN,
          msg: 'outbox could not settle an entry',
          key: 'odd',
          err: expect.objectContaining({ message: 'disk gone' }),
        }),
      );
    }
  });

  it('recovery says how many replies it resends, and says nothing when there are none', async () => {
    const { logger, lines } = capturedLogger();
    const outbox = new MemoryOutbox();
    const { routing } = routingWith([new RecordingTransport()], { logger, outbox });
    await routing.recover();
    expect(lines.filter((l) => l.msg === 'resending unsettled outbox entries')).toEqual([]);
    await outbox.record(responseOf('a', 'one'), 0);
    await outbox.record(responseOf('b', 'two', { channel: { kind: 'test', id: 'other' } }), 0);
    await routing.recover();
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'resending unsettled outbox entries', count: 2 }),
    );
  });

  it('speech that fails is warned about with the reply and the code, and the text goes out', async () => {
    const { logger, lines } = capturedLogger();
    const speech = {
      id: 'test:speech',
      async synthesize(): Promise<never> {
        throw new TroupeError('TROUPE_SPEECH_FAILED', 'no voice today');
      },
    };
    const transport = new RecordingTransport();
    const { routing } = routingWith([transport], { logger, speech });
    await routing.route(responseOf('v', undefined, { voice: { text: 'Said instead' } }));
    expect(transport.texts()).toEqual(['Said instead']);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: WARN,
        msg: 'speech failed; sending the text instead',
        key: 'v',
        code: 'TROUPE_SPEECH_FAILED',
      }),
    );
  });
});
