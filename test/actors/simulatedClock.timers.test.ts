/**
 * The simulated clock fires its timers in order of due time, then of scheduling order, however
 * many are pending and whatever was cleared meanwhile: checked against a plain sorted list over a
 * long random run of scheduling, clearing and firing.
 */
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/actors/clock.js';
import type { TimerHandle } from '../../src/ports/clock.js';
import { seededRandom } from '../support/seededRandom.js';

describe('SimulatedClock timers', () => {
  it('fire in the order a sorted list gives, through random schedules, clears and fires', () => {
    const clock = new SimulatedClock(0);
    const model: { due: number; seq: number; id: number }[] = [];
    const handles = new Map<number, TimerHandle>();
    const fired: number[] = [];
    const expected: number[] = [];
    const random = seededRandom(11);
    let seq = 0;
    for (let step = 0; step < 60_000; step++) {
      const r = random();
      if (r < 0.55) {
        const id = seq;
        const due = clock.now() + Math.floor(random() * 50);
        handles.set(
          id,
          clock.setTimer(due, () => fired.push(id)),
        );
        model.push({ due: Math.max(due, clock.now()), seq: seq++, id });
      } else if (r < 0.75 && model.length > 0) {
        const at = Math.floor(random() * model.length);
        const [gone] = model.splice(at, 1);
        clock.clearTimer(handles.get(gone?.id as number) as TimerHandle);
      } else {
        model.sort((a, b) => a.due - b.due || a.seq - b.seq);
        const next = model[0];
        const limit = clock.now() + Math.floor(random() * 10);
        const didFire = clock.fireNext(limit);
        expect(didFire).toBe(next !== undefined && next.due <= limit);
        if (didFire && next) expected.push(model.shift()?.id as number);
      }
      expect(clock.pending).toBe(model.length);
    }
    expect(fired).toEqual(expected);
    expect(fired.length).toBeGreaterThan(10_000);
  });

  it('keeps count and order with 100,000 timers pending, most of them cleared', () => {
    const clock = new SimulatedClock(0);
    const fired: number[] = [];
    const handles = Array.from({ length: 100_000 }, (_, i) =>
      clock.setTimer(100_000 - i, () => fired.push(i)),
    );
    handles.forEach((h, i) => {
      if (i % 10 !== 0) clock.clearTimer(h);
    });
    expect(clock.pending).toBe(10_000);
    expect(clock.nextDue()).toBe(10);
    clock.advanceSync(100_000);
    expect(fired.length).toBe(10_000);
    expect(fired[0]).toBe(99_990);
    expect(fired.at(-1)).toBe(0);
    expect(clock.pending).toBe(0);
  });
});
