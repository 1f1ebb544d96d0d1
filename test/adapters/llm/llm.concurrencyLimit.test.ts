import { describe, expect, it } from 'vitest';
import { createConcurrencyLimit } from '../../../src/adapters/llm/concurrencyLimit.js';

/** A promise with its resolver, to finish tasks by hand. */
function gate() {
  let open: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Lets queued microtasks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('concurrency limit', () => {
  it('runs at most max tasks at once, starting waiters in FIFO order', async () => {
    const limit = createConcurrencyLimit(2);
    const gates = Array.from({ length: 5 }, gate);
    const started: number[] = [];
    const done = gates.map((g, i) =>
      limit.run(async () => {
        started.push(i);
        await g.promise;
        return i;
      }),
    );
    await settle();
    expect(started).toEqual([0, 1]);
    expect([limit.active, limit.waiting]).toEqual([2, 3]);

    gates[1]?.open();
    await settle();
    expect(started).toEqual([0, 1, 2]);
    gates[0]?.open();
    await settle();
    expect(started).toEqual([0, 1, 2, 3]);
    expect(limit.active).toBe(2);

    for (const g of gates) g.open();
    expect(await Promise.all(done)).toEqual([0, 1, 2, 3, 4]);
    expect([limit.active, limit.waiting]).toEqual([0, 0]);
  });

  it('frees the slot when a task fails', async () => {
    const limit = createConcurrencyLimit(1);
    await expect(limit.run(async () => Promise.reject(new Error('nope')))).rejects.toThrow('nope');
    expect(await limit.run(async () => 'next')).toBe('next');
    expect(limit.active).toBe(0);
  });

  it('drops a waiter whose signal aborts, without starting it', async () => {
    const limit = createConcurrencyLimit(1);
    const first = gate();
    const running = limit.run(() => first.promise);
    const controller = new AbortController();
    let ran = false;
    const waiting = limit.run(async () => {
      ran = true;
    }, controller.signal);
    const third = limit.run(async () => 'third');
    await settle();
    controller.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    expect(limit.waiting).toBe(1);
    first.open();
    await running;
    expect(await third).toBe('third');
    expect(ran).toBe(false);
    expect(limit.active).toBe(0);
  });

  it('rejects at once for an aborted signal and refuses a bad max', async () => {
    const controller = new AbortController();
    controller.abort(new Error('already'));
    await expect(createConcurrencyLimit(1).run(async () => 1, controller.signal)).rejects.toThrow('already');
    expect(() => createConcurrencyLimit(0)).toThrow(RangeError);
    expect(() => createConcurrencyLimit(1.5)).toThrow(RangeError);
  });
  it('keeps FIFO order and counts through a large backlog with half of it aborted', async () => {
    const limit = createConcurrencyLimit(2);
    const blockers = [gate(), gate()];
    const running = blockers.map((g) => limit.run(() => g.promise));
    const n = 50_000;
    const started: number[] = [];
    const controllers = Array.from({ length: n }, () => new AbortController());
    const results = controllers.map((c, i) =>
      limit
        .run(async () => {
          started.push(i);
          return i;
        }, c.signal)
        .catch((error: unknown) => (error as Error).message),
    );
    expect([limit.active, limit.waiting]).toEqual([2, n]);
    // Every even waiter gives up, each with its own reason (as a stop aborting each call would).
    for (let i = 0; i < n; i += 2) controllers[i]?.abort(new Error(`stop ${i}`));
    expect([limit.active, limit.waiting]).toEqual([2, n / 2]);
    // One signal aborting many waiters at once (the whole runtime stopping) works the same.
    const shared = new AbortController();
    const late = Array.from({ length: 3 }, () => limit.run(async () => 'late', shared.signal).catch(String));
    shared.abort(new Error('all'));
    expect(await Promise.all(late)).toEqual(Array(3).fill('Error: all'));
    expect(limit.waiting).toBe(n / 2);

    for (const g of blockers) g.open();
    await Promise.all(running);
    const settled = await Promise.all(results);
    expect(settled.every((r, i) => (i % 2 === 0 ? r === `stop ${i}` : r === i))).toBe(true);
    expect(started).toEqual(Array.from({ length: n / 2 }, (_, k) => 2 * k + 1));
    expect([limit.active, limit.waiting]).toEqual([0, 0]);
    // Drained, the limit takes new work as before.
    expect(await limit.run(async () => 'after')).toBe('after');
  });
});
