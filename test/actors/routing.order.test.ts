/**
 * Order and sharing: replies to one channel go out one after another in the order they were
 * routed, other channels do not wait for them, and one reply routed twice goes out once.
 */
import { describe, expect, it } from 'vitest';
import type { RoutingOutcome } from '../../src/ports/routingOutcome.js';
import { RecordingTransport } from '../../src/testing/recordingTransport.js';
import {
  GatedTransport,
  responseOf,
  routingWith,
  ScriptedTransport,
  tick,
} from '../support/routingHarness.js';

describe('one channel', () => {
  it('a reply waits until the one before it has gone out, however long that takes', async () => {
    const transport = new GatedTransport();
    const { routing } = routingWith([transport]);
    const first = routing.route(responseOf('1', 'first'));
    const second = routing.route(responseOf('2', 'second'));
    await tick();
    expect(transport.started).toEqual(['first']);
    transport.release('first');
    await first;
    await tick();
    expect(transport.started).toEqual(['first', 'second']);
    // A third reply routed while the second is still going out waits for it.
    const third = routing.route(responseOf('3', 'third'));
    await tick();
    expect(transport.started).toEqual(['first', 'second']);
    transport.release('second');
    await tick();
    expect(transport.started).toEqual(['first', 'second', 'third']);
    transport.release('third');
    expect((await Promise.all([second, third])).map((o) => o.sent)).toEqual([true, true]);
  });

  it('a reply that failed does not hold back the next one', async () => {
    const transport = new RecordingTransport().failNext({
      code: 'TROUPE_TRANSPORT_FORBIDDEN',
      retryable: false,
    });
    const { routing } = routingWith([transport]);
    const [a, b] = await Promise.all([
      routing.route(responseOf('a', 'one')),
      routing.route(responseOf('b', 'two')),
    ]);
    expect([a.sent, b.sent]).toEqual([false, true]);
    expect(transport.texts()).toEqual(['two']);
  });
});

describe('other channels', () => {
  it('do not wait for a channel whose send is slow', async () => {
    const transport = new ScriptedTransport((_, m) =>
      m.channelId === 'slow' ? new Promise(() => undefined) : Promise.resolve({ messageId: 'ok' }),
    );
    const { routing } = routingWith([transport]);
    void routing.route(responseOf('s', 'hello', { channel: { kind: 'test', id: 'slow' } }));
    const fast = await routing.route(responseOf('f', 'hello', { channel: { kind: 'test', id: 'fast' } }));
    expect(fast.sent).toBe(true);
    expect(transport.messages.map((m) => m.channelId)).toEqual(['slow', 'fast']);
  });
});

describe('one reply routed twice at once', () => {
  it('a caller without a handler joins the delivery; the first caller is told once', async () => {
    const transport = new GatedTransport();
    const { routing } = routingWith([transport]);
    const told: RoutingOutcome[] = [];
    const a = routing.routePrepared(responseOf('same', 'hello'), (o) => told.push(o));
    const b = routing.route(responseOf('same', 'hello'));
    expect(b).toBe(a);
    await tick();
    transport.release('hello');
    await a;
    await tick();
    expect(transport.started).toEqual(['hello']);
    expect(told).toHaveLength(1);
  });

  it('when routing is abandoned meanwhile, no caller is told it settled', async () => {
    const transport = new GatedTransport();
    const { routing } = routingWith([transport]);
    const told: string[] = [];
    const a = routing.routePrepared(responseOf('same', 'hello'), () => told.push('a'));
    const b = routing.resume(
      { key: 'same', response: responseOf('same', 'hello'), recordedAt: 0, sentParts: [] },
      () => told.push('b'),
    );
    await tick();
    routing.abandon();
    const [oa, ob] = await Promise.all([a, b]);
    await tick();
    expect(oa.error?.code).toBe('TROUPE_TRANSPORT_ABORTED');
    expect(ob).toBe(oa);
    expect(told).toEqual([]);
  });
});
