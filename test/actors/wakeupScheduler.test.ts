/**
 * The wake-up scheduler wakes each channel once, at the time it was last scheduled for, in time
 * order, however often a channel is scheduled again while nothing fires: checked against a plain
 * map over a random run.
 */
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/actors/clock.js';
import { WakeupScheduler } from '../../src/actors/wakeupScheduler.js';
import { seededRandom } from '../support/seededRandom.js';

describe('WakeupScheduler', () => {
  it('wakes each key once, at its latest time, in time order, through random reschedules', () => {
    const clock = new SimulatedClock(0);
    const woken: { key: string; at: number }[] = [];
    const scheduler = new WakeupScheduler(clock, (key) => woken.push({ key, at: clock.now() }));
    const latest = new Map<string, number>();
    const random = seededRandom(5);
    for (let step = 0; step < 20_000; step++) {
      const key = `ch${Math.floor(random() * 50)}`;
      const at = clock.now() + 1 + Math.floor(random() * 1_000);
      scheduler.schedule(key, at);
      latest.set(key, at);
      if (random() < 0.02) clock.advanceSync(Math.floor(random() * 300));
      for (const [k, t] of latest) if (t <= clock.now()) latest.delete(k);
    }
    const before = woken.length;
    clock.advanceSync(2_000);
    const last = woken.slice(before);
    expect(last.map((w) => w.key).sort()).toEqual([...latest.keys()].sort());
    for (const w of last) expect(w.at).toBe(latest.get(w.key));
    for (let i = 1; i < woken.length; i++) expect(woken[i]?.at).toBeGreaterThanOrEqual(woken[i - 1]?.at ?? 0);
    expect(scheduler.size).toBe(0);
  });

  it('wakes nothing after dispose', () => {
    const clock = new SimulatedClock(0);
    const woken: string[] = [];
    const scheduler = new WakeupScheduler(clock, (key) => woken.push(key));
    scheduler.schedule('a', 10);
    scheduler.dispose();
    clock.advanceSync(100);
    expect(woken).toEqual([]);
    expect(clock.pending).toBe(0);
  });
});
