/**
 * The bounded maps that forget their oldest entry (the Discord adapter's recent messages and
 * delivery keys, the memory outbox's settled keys) keep the newest entries in order, whatever was
 * deleted or set again meanwhile.
 */
import { describe, expect, it } from 'vitest';
import { ChannelRecentMap } from '../../src/adapters/discord/channelRecentMap.js';
import { RecentMap } from '../../src/adapters/discord/recentMap.js';
import { OldestKey } from '../../src/adapters/oldestKey.js';
import { SettledKeys } from '../../src/adapters/store/memory/settledKeys.js';
import { seededRandom } from '../support/seededRandom.js';

describe('OldestKey', () => {
  it('gives the oldest key left, skipping deleted ones, and a key set again as the newest', () => {
    const map = new Map<string, number>([
      ['a', 1],
      ['b', 2],
      ['c', 3],
      ['d', 4],
    ]);
    const oldest = new OldestKey<string>(map);
    map.delete('a');
    map.delete('b');
    map.set('b', 5); // back, at the end
    expect(oldest.next()).toBe('c');
    map.delete('c');
    expect(oldest.next()).toBe('d');
    map.delete('d');
    expect(oldest.next()).toBe('b');
    map.delete('b');
    expect(oldest.next()).toBeUndefined();
    map.set('e', 6); // after it ran out
    expect(oldest.next()).toBe('e');
  });

  it('agrees with a plain list through a long random run of sets, deletes and evictions', () => {
    const capacity = 50;
    const map = new RecentMap<string, number>(capacity);
    const model: string[] = [];
    const random = seededRandom(7);
    for (let i = 0; i < 100_000; i++) {
      const key = `k${Math.floor(random() * 120)}`;
      const at = model.indexOf(key);
      if (at >= 0) model.splice(at, 1);
      if (random() < 0.7) {
        model.push(key);
        if (model.length > capacity) model.shift();
        map.set(key, i);
      } else {
        map.delete(key);
      }
      if (i % 997 === 0) expect(model.filter((k) => map.has(k))).toEqual(model);
    }
    expect(map.size).toBe(model.length);
  });
});

describe('RecentMap', () => {
  it('forgets the oldest entry, counting a key set again as new and a deleted one as gone', () => {
    const map = new RecentMap<string, number>(3);
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    map.set('a', 4); // a is now the newest
    map.set('d', 5); // b goes
    expect([...['a', 'b', 'c', 'd']].filter((k) => map.has(k))).toEqual(['a', 'c', 'd']);
    map.delete('c');
    map.set('e', 6);
    map.set('f', 7); // a goes (the oldest left), not d
    expect(['a', 'c', 'd', 'e', 'f'].filter((k) => map.has(k))).toEqual(['d', 'e', 'f']);
    expect(map.get('a')).toBeUndefined();
    expect(map.get('f')).toBe(7);
  });

  it('keeps its newest entries over a long run of churn at a large capacity', () => {
    const map = new RecentMap<number, number>(10_000);
    for (let n = 0; n < 200_000; n++) {
      map.set(n, n);
      if (n % 3 === 0) map.delete(n - 1);
      if (n % 7 === 0) map.set(n - 5, n); // set again: moves to the newest end
    }
    expect(map.size).toBe(10_000);
    expect(map.has(199_999)).toBe(true);
    expect(map.get(199_995)).toBe(199_995);
    expect(map.has(150_000)).toBe(false);
  });
});

describe('ChannelRecentMap', () => {
  it('forgets the oldest of all past its capacity, and the oldest of a channel past its share', () => {
    const map = new ChannelRecentMap<number>(2, 3);
    map.set('x', 'x1', 1);
    map.set('y', 'y1', 2);
    map.set('x', 'x2', 3);
    map.set('x', 'x3', 4); // x1 goes: two per channel
    expect(map.has('x1')).toBe(false);
    map.set('z', 'z1', 5); // y1 goes: the oldest of all
    expect(['y1', 'x2', 'x3', 'z1'].filter((k) => map.has(k))).toEqual(['x2', 'x3', 'z1']);
    map.set('x', 'x2', 6); // set again: the newest
    map.set('y', 'y2', 7); // x3 goes: the oldest of all now
    expect(['x2', 'x3', 'z1', 'y2'].filter((k) => map.has(k))).toEqual(['x2', 'z1', 'y2']);
    expect(map.channelCount).toBe(3);
  });
});

describe('SettledKeys', () => {
  it('forgets settled keys oldest first, per channel and in all', () => {
    const forgotten: string[] = [];
    const keys = new SettledKeys(3, 2);
    const forget = (k: string) => forgotten.push(k);
    keys.add('c1', 'a', forget);
    keys.add('c1', 'b', forget);
    keys.add('c1', 'c', forget); // a: two per channel
    keys.add('c2', 'd', forget);
    keys.add('c3', 'e', forget); // b: three in all
    expect(forgotten).toEqual(['a', 'b']);
    expect(keys.size).toBe(3);
    for (let i = 0; i < 50_000; i++) keys.add(`c${i % 100}`, `k${i}`, forget);
    expect(keys.size).toBe(3);
    expect(forgotten.at(-1)).toBe('k49996');
  });
});
