/**
 * Retries and send timeouts: how long routing waits before trying a failed send again, when it
 * gives up, when a send that never answers is aborted, and that nothing is left running after.
 */
import { describe, expect, it } from 'vitest';
import { MemoryOutbox } from '../../src/adapters/store/memory/memoryOutbox.js';
import { TransportError } from '../../src/ports/transport.js';
import { RecordingTransport } from '../../src/testing/recordingTransport.js';
import { drive, responseOf, routingWith, ScriptedTransport, tick } from '../support/routingHarness.js';

const hangs = () => new Promise<never>(() => undefined);

describe('waiting between attempts', () => {
  it('replies failing together retry at spread-out times, each within a quarter of the backoff', async () => {
    const firstWaits: number[] = [];
    for (const key of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) {
      const { routing, clock } = routingWith([new RecordingTransport().failNext()], {
        retry: { baseDelayMs: 1_000 },
      });
      const { fired } = await drive(clock, routing.route(responseOf(key, 'hello')));
      firstWaits.push(fired[0] ?? Number.NaN);
    }
    for (const wait of firstWaits) {
      expect(wait).toBeGreaterThanOrEqual(750);
      expect(wait).toBeLessThan(1_250);
    }
    expect(new Set(firstWaits).size).toBeGreaterThan(4);
  });

  it('a platform asking for a negative wait gets the ordinary backoff', async () => {
    const transport = new RecordingTransport().failNext({ retryAfterMs: -5_000 });
    const { routing, clock } = routingWith([transport], { retry: { baseDelayMs: 1_000 } });
    const { outcome, fired } = await drive(clock, routing.route(responseOf('a', 'x')));
    expect(outcome.sent).toBe(true);
    expect(fired).toHaveLength(1);
    expect(fired[0]).toBeGreaterThanOrEqual(750);
  });

  it('a later failure that says retrying will not help ends the retries with that failure', async () => {
    const transport = new ScriptedTransport(async (n) => {
      if (n === 1) throw new TransportError('TROUPE_TRANSPORT_UNAVAILABLE', 'busy', { retryable: true });
      throw new TransportError('TROUPE_TRANSPORT_FORBIDDEN', 'not allowed here', { retryable: false });
    });
    const { routing, clock } = routingWith([transport]);
    const { outcome } = await drive(clock, routing.route(responseOf('k', 'hello')));
    expect(transport.messages).toHaveLength(2);
    expect(outcome).toMatchObject({
      attempted: true,
      sent: false,
      error: {
        code: 'TROUPE_TRANSPORT_FORBIDDEN',
        message: 'not allowed here (after 2 attempts)',
        retryable: false,
      },
    });
  });

  it('a reply abandoned during its backoff reports no part sent and stays in the outbox', async () => {
    const transport = new RecordingTransport().failNext({ times: 5 });
    const outbox = new MemoryOutbox();
    const { routing, clock } = routingWith([transport], { outbox, retry: { baseDelayMs: 60_000 } });
    const delivery = routing.route(responseOf('waiting', 'hello'));
    await tick();
    routing.abandon();
    const outcome = await delivery;
    expect(outcome).toEqual({
      idempotencyKey: 'waiting',
      channel: { kind: 'test', id: 'room' },
      origin: { kind: 'notice' },
      attempted: true,
      sent: false,
      parts: [],
      voiceFellBackToText: false,
      duplicate: false,
      error: { code: 'TROUPE_TRANSPORT_ABORTED', message: expect.any(String), retryable: true },
      at: 0,
    });
    expect((await outbox.get('waiting'))?.sentParts).toEqual([]);
    expect(await outbox.unsettled()).toHaveLength(1);
    expect(clock.pending).toBe(0);
  });
});

describe('nothing is left running', () => {
  it('after a reply goes out, first time or after retries, no send or timer is pending', async () => {
    for (const failures of [0, 2]) {
      const transport = new RecordingTransport().failNext({ times: failures });
      const { routing, clock } = routingWith([transport]);
      const { outcome } = await drive(clock, routing.route(responseOf('k', 'hello')));
      expect(outcome).toMatchObject({ sent: true, voiceFellBackToText: false });
      expect(outcome).not.toHaveProperty('error');
      expect(routing.sendsInFlight).toBe(0);
      expect(clock.pending).toBe(0);
    }
  });
});

describe('a send that never answers', () => {
  it('sends started at different times each time out at their own deadline', async () => {
    const transport = new ScriptedTransport(hangs);
    const { routing, clock } = routingWith([transport], { sendTimeoutMs: 1_000, retry: { maxAttempts: 1 } });
    const timedOut: Record<string, number> = {};
    const early = routing.route(responseOf('early', 'a', { channel: { kind: 'test', id: 'one' } }));
    void early.then(() => {
      timedOut.early = clock.now();
    });
    await tick();
    clock.setNow(400);
    const late = routing.route(responseOf('late', 'b', { channel: { kind: 'test', id: 'two' } }));
    void late.then(() => {
      timedOut.late = clock.now();
    });
    await drive(clock, late);
    expect(timedOut).toEqual({ early: 1_000, late: 1_400 });
    expect(transport.signals.map((s) => s.aborted)).toEqual([true, true]);
    expect(clock.pending).toBe(0);
  });

  it('a transport with a shorter timeout is not held to a slower one started before it', async () => {
    const slow = new ScriptedTransport(hangs, { sendTimeoutMs: 5_000 }, 'slow');
    const quick = new ScriptedTransport(hangs, { sendTimeoutMs: 1_000 }, 'quick');
    const { routing, clock } = routingWith([slow, quick], { retry: { maxAttempts: 1 } });
    const atSlow = routing.route(responseOf('s', 'a', { channel: { kind: 'slow', id: 'x' } }));
    const atQuick = routing.route(responseOf('q', 'b', { channel: { kind: 'quick', id: 'x' } }));
    const { outcome, fired } = await drive(clock, atQuick);
    expect(outcome.error?.message).toContain('within 1000 ms');
    expect(fired).toEqual([1_000]);
    const rest = await drive(clock, atSlow);
    expect(rest.outcome.error?.message).toContain('within 5000 ms');
    expect(rest.fired).toEqual([5_000]);
  });
});
