/**
 * Routing and the outbox: a response is recorded before it is sent, each part the transport took
 * is noted, and the entry is settled after, so a restart resends exactly what did not go out and a
 * reply that did go out is never sent twice.
 */
import { describe, expect, it } from 'vitest';
import { MemoryOutbox } from '../../src/adapters/store/memory/memoryOutbox.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import type { Outbox } from '../../src/ports/outbox.js';
import type { RoutingOutcome } from '../../src/ports/routingOutcome.js';
import { TransportError } from '../../src/ports/transport.js';
import { RecordingTransport } from '../../src/testing/recordingTransport.js';
import { drive, responseOf, routingWith, ScriptedTransport, tick } from '../support/routingHarness.js';

const fiveWords = 'aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj';

describe('a reply already handled', () => {
  it('settled: not sent again, and the outcome repeats what went out, marked duplicate', async () => {
    const transport = new RecordingTransport();
    const { routing } = routingWith([transport]);
    const first = await routing.route(responseOf('once', 'hello'));
    const again = await routing.route(responseOf('once', 'hello'));
    expect(again).toEqual({
      idempotencyKey: 'once',
      channel: { kind: 'test', id: 'room' },
      origin: { kind: 'notice' },
      attempted: false,
      sent: true,
      parts: first.parts,
      voiceFellBackToText: false,
      duplicate: true,
      at: 0,
    });
    expect(transport.attempts).toHaveLength(1);
  });

  it('recorded but never settled (a crash mid-send), routed again: only the parts not taken go out', async () => {
    const outbox = new MemoryOutbox();
    const transport = new RecordingTransport({ limits: { maxTextLength: 20 } });
    await outbox.record(responseOf('crash', fiveWords), 0);
    await outbox.markPartSent('crash', { index: 0, kind: 'text', messageId: 'old-0', attempts: 1 });
    await outbox.markPartSent('crash', { index: 1, kind: 'text', messageId: 'old-1', attempts: 1 });
    const { routing } = routingWith([transport], { outbox });
    const outcome = await routing.route(responseOf('crash', fiveWords));
    expect(outcome).toMatchObject({ sent: true, duplicate: false });
    expect(transport.sent.map((m) => m.idempotencyKey)).toEqual(['crash#2']);
    expect(outcome.parts.map((p) => p.messageId)).toEqual(['old-0', 'old-1', 'test-1']);
  });

  it('a part whose note was lost before a crash is sent on recovery; the outcome lists parts by index', async () => {
    const outbox = new MemoryOutbox();
    const transport = new RecordingTransport({ limits: { maxTextLength: 20 } });
    await outbox.record(responseOf('gap', fiveWords), 0);
    await outbox.markPartSent('gap', { index: 0, kind: 'text', messageId: 'old-0', attempts: 1 });
    // Part 1's note failed (routing only logs that) and part 2's was kept.
    await outbox.markPartSent('gap', { index: 2, kind: 'text', messageId: 'old-2', attempts: 1 });
    const { routing } = routingWith([transport], { outbox });
    const [outcome] = await routing.recover();
    expect(transport.sent.map((m) => m.idempotencyKey)).toEqual(['gap#1']);
    expect(outcome?.parts.map((p) => [p.index, p.messageId])).toEqual([
      [0, 'old-0'],
      [1, 'test-1'],
      [2, 'old-2'],
    ]);
  });
});

describe('how an entry is settled', () => {
  it('a reply that failed for good is settled as failed with its error, so no restart resends it', async () => {
    const transport = new RecordingTransport().failNext({
      code: 'TROUPE_TRANSPORT_FORBIDDEN',
      retryable: false,
    });
    const { routing, outbox } = routingWith([transport]);
    const outcome = await routing.route(responseOf('denied', 'hello'));
    expect(outcome).toMatchObject({ attempted: true, sent: false });
    expect((await outbox.get('denied'))?.settled).toEqual({ at: 0, sent: false, error: outcome.error });
    expect(await outbox.unsettled()).toEqual([]);
  });

  it('a reply that went out is settled as sent, with each part noted', async () => {
    const transport = new RecordingTransport({ limits: { maxTextLength: 20 } });
    const { routing, outbox } = routingWith([transport]);
    const outcome = await routing.route(responseOf('ok', fiveWords));
    const entry = await outbox.get('ok');
    expect(entry?.settled).toEqual({ at: 0, sent: true });
    expect(entry?.sentParts).toEqual(outcome.parts);
  });

  it('an outbox that cannot note a part or settle does not stop the reply; it goes out once', async () => {
    const outbox = new MemoryOutbox();
    outbox.markPartSent = async () => {
      throw new Error('disk full');
    };
    outbox.settle = async () => {
      throw new Error('disk full');
    };
    const transport = new RecordingTransport({ limits: { maxTextLength: 20 } });
    const { routing } = routingWith([transport], { outbox });
    const outcome = await routing.route(responseOf('k', fiveWords));
    expect(outcome.sent).toBe(true);
    expect(transport.sent.map((m) => m.idempotencyKey)).toEqual(['k#0', 'k#1', 'k#2']);
  });
});

describe('a delivery that fails in a way routing did not plan for', () => {
  // A transport whose limits change under routing after it was registered: splitting throws.
  const shrinking = () => new RecordingTransport({ limits: { maxTextLength: 40 } });
  const shrink = (transport: RecordingTransport) => {
    (transport.limits as { maxTextLength: number }).maxTextLength = 5;
  };

  for (const [store, makeOutbox] of [
    ['the memory outbox', () => new MemoryOutbox()],
    ['an outbox that writes at once', () => createMemoryStore().outbox],
  ] as const) {
    it(`ends with a failed outcome and a failed settlement, never a rejection (${store})`, async () => {
      const outbox: Outbox = makeOutbox();
      const transport = shrinking();
      const { routing } = routingWith([transport], { outbox: outbox as MemoryOutbox });
      shrink(transport);
      const told: RoutingOutcome[] = [];
      const outcome = await routing.routePrepared(responseOf('odd', 'hello there'), (o) => told.push(o));
      expect(outcome).toEqual({
        idempotencyKey: 'odd',
        channel: { kind: 'test', id: 'room' },
        origin: { kind: 'notice' },
        attempted: true,
        sent: false,
        parts: [],
        voiceFellBackToText: false,
        duplicate: false,
        error: { code: 'TROUPE_TRANSPORT_LIMIT_INVALID', message: expect.any(String), retryable: false },
        at: 0,
      });
      expect(told).toEqual([outcome]);
      expect(transport.attempts).toEqual([]);
      expect((await outbox.get('odd'))?.settled).toEqual({ at: 0, sent: false, error: outcome.error });
    });
  }

  it('still ends when the outbox cannot settle it either, whether it throws or rejects', async () => {
    for (const fail of [
      () => {
        throw new Error('disk full');
      },
      async () => {
        throw new Error('disk full');
      },
    ]) {
      const outbox = new MemoryOutbox();
      outbox.settle = fail as never;
      const transport = shrinking();
      const { routing } = routingWith([transport], { outbox });
      shrink(transport);
      const outcome = await routing.route(responseOf('odd', 'hello there'));
      expect(outcome.error?.code).toBe('TROUPE_TRANSPORT_LIMIT_INVALID');
    }
  });

  it('a transport that answers null is unconfirmed, not a crash', async () => {
    const transport = new ScriptedTransport(async () => null);
    const { routing, clock } = routingWith([transport]);
    const { outcome } = await drive(clock, routing.route(responseOf('u', 'hello')));
    expect(outcome.error?.code).toBe('TROUPE_TRANSPORT_UNCONFIRMED');
    expect(outcome.error?.message).toContain('returned no message id');
  });
});

describe('the writes a reply makes to a promise-only outbox', () => {
  it('each part but the last is noted on its own; the last goes with the settlement (one write less)', async () => {
    const outbox = new MemoryOutbox();
    const calls: string[] = [];
    const markPartSent = outbox.markPartSent.bind(outbox);
    const settle = outbox.settle.bind(outbox);
    outbox.markPartSent = (key, part) => {
      calls.push(`part ${part.index}`);
      return markPartSent(key, part);
    };
    outbox.settle = (key, settlement, lastPart) => {
      calls.push(`settle with ${lastPart ? `part ${lastPart.index}` : 'no part'}`);
      return settle(key, settlement, lastPart);
    };
    const transport = new RecordingTransport({ limits: { maxTextLength: 20 } });
    const { routing } = routingWith([transport], { outbox });
    const outcome = await routing.route(responseOf('three', fiveWords));
    expect(calls).toEqual(['part 0', 'part 1', 'settle with part 2']);
    const stored = await outbox.get('three');
    expect(stored?.sentParts).toEqual(outcome.parts);
    expect(stored?.settled).toMatchObject({ sent: true });
  });

  it('a reply that fails midway settles with no part: the parts that went out were noted one by one', async () => {
    const outbox = new MemoryOutbox();
    const transport = new ScriptedTransport(
      async (n) => {
        if (n === 1) return { messageId: 'm-0' };
        throw new TransportError('TROUPE_TRANSPORT_FORBIDDEN', 'Missing Access', { retryable: false });
      },
      { maxTextLength: 20 },
    );
    const { routing } = routingWith([transport], { outbox });
    const outcome = await routing.route(responseOf('half', fiveWords));
    expect(outcome.sent).toBe(false);
    expect((await outbox.get('half'))?.sentParts.map((p) => p.messageId)).toEqual(['m-0']);
  });
});

describe('the writes a reply makes to an outbox that answers at once (the memory store)', () => {
  it('notes every part at once, the last too, and settles; a part it cannot note is logged and the reply stands', async () => {
    const { outbox } = createMemoryStore();
    const transport = new RecordingTransport({ limits: { maxTextLength: 20 } });
    const { routing } = routingWith([transport], { outbox: outbox as never });
    const outcome = await routing.route(responseOf('three', fiveWords));
    expect(outcome.sent).toBe(true);
    const stored = await outbox.get('three');
    expect(stored?.sentParts.map((p) => p.index)).toEqual([0, 1, 2]);
    expect(stored?.settled).toMatchObject({ sent: true });

    const warnings: string[] = [];
    const immediate = outbox.immediate;
    if (!immediate) throw new Error('the memory store answers at once');
    const failing = Object.create(outbox) as typeof outbox;
    Object.defineProperty(failing, 'immediate', {
      value: {
        ...immediate,
        markPartSent: () => {
          throw new Error('disk full');
        },
      },
    });
    const logger = {
      warn: (_: unknown, msg: string) => warnings.push(msg),
      info: () => undefined,
      debug: () => undefined,
      error: () => undefined,
      child: () => logger,
    };
    const other = routingWith([new RecordingTransport()], {
      outbox: failing as never,
      logger: logger as never,
    });
    expect((await other.routing.route(responseOf('noted-not', 'hello'))).sent).toBe(true);
    expect(warnings).toContain('outbox could not note a sent part');
  });
});

describe('when the outcome is published, against when the settlement is stored', () => {
  /** A MemoryOutbox without its immediate writes, whose settlements are stored when `store()` says. */
  function slowSettling(writesInOrder: boolean) {
    const inner = new MemoryOutbox();
    const held: (() => void)[] = [];
    const outbox: Outbox = {
      record: (response, at) => inner.record(response, at),
      markPartSent: (key, part) => inner.markPartSent(key, part),
      settle: (key, settlement, lastPart) =>
        new Promise<void>((resolve) => {
          held.push(() => void inner.settle(key, settlement, lastPart).then(resolve));
        }),
      unsettled: (limit) => inner.unsettled(limit),
      get: (key) => inner.get(key),
      writesInOrder,
    };
    const store = () => {
      for (const settle of held.splice(0)) settle();
    };
    return { outbox, inner, store };
  }

  it('a store that keeps writes in order: published as the settlement is asked for; the delivery ends once it is stored', async () => {
    const { outbox, inner, store } = slowSettling(true);
    const { routing } = routingWith([new RecordingTransport()], { outbox });
    const told: RoutingOutcome[] = [];
    let ended = false;
    const delivery = routing.routePrepared(responseOf('ordered', 'hello'), (o) => told.push(o));
    void delivery.then(() => {
      ended = true;
    });
    await tick();
    expect(told.map((o) => o.sent)).toEqual([true]);
    expect(ended).toBe(false);
    expect((await inner.get('ordered'))?.settled).toBeUndefined();
    store();
    expect(await delivery).toBe(told[0]);
    expect((await inner.get('ordered'))?.settled).toMatchObject({ sent: true });
  });

  it("a store that keeps writes in order: the channel's next reply is recorded and sent while the settlement before it is still being stored", async () => {
    const { outbox, inner, store } = slowSettling(true);
    const transport = new RecordingTransport();
    const { routing } = routingWith([transport], { outbox });
    const first = routing.routePrepared(responseOf('first', 'one'), () => undefined);
    const second = routing.routePrepared(responseOf('second', 'two'), () => undefined);
    await tick();
    // The second went out after the first (one channel, in order), before the first was stored.
    expect(transport.sent.map((m) => m.text)).toEqual(['one', 'two']);
    expect((await inner.get('first'))?.settled).toBeUndefined();
    expect(await inner.get('second')).toBeDefined();
    store();
    expect((await first).sent).toBe(true);
    expect((await second).sent).toBe(true);
    expect((await inner.get('first'))?.settled).toMatchObject({ sent: true });
    expect((await inner.get('second'))?.settled).toMatchObject({ sent: true });
  });

  it("any other store: the channel's next reply waits until the settlement before it is stored", async () => {
    const { outbox, inner, store } = slowSettling(false);
    const transport = new RecordingTransport();
    const { routing } = routingWith([transport], { outbox });
    const first = routing.routePrepared(responseOf('first', 'one'), () => undefined);
    const second = routing.routePrepared(responseOf('second', 'two'), () => undefined);
    await tick();
    expect(transport.sent.map((m) => m.text)).toEqual(['one']);
    expect(await inner.get('second')).toBeUndefined();
    store();
    await first;
    await tick();
    store();
    await second;
    expect(transport.sent.map((m) => m.text)).toEqual(['one', 'two']);
  });

  it('any other store: published only once the settlement is stored', async () => {
    const { outbox, store } = slowSettling(false);
    const { routing } = routingWith([new RecordingTransport()], { outbox });
    const told: RoutingOutcome[] = [];
    const delivery = routing.routePrepared(responseOf('unordered', 'hello'), (o) => told.push(o));
    await tick();
    expect(told).toEqual([]);
    store();
    await delivery;
    expect(told.map((o) => o.sent)).toEqual([true]);
  });
});
