/**
 * The bounded maps that forget their oldest entry (the Discord adapter's recent messages and
 * delivery keys, the memory outbox's settled keys) keep the newest entries in order, whatever was
 * deleted or set again meanwhile, and what they queue for it stays bounded by what they hold.
 */
import { describe, expect, it } from 'vitest';
import { ChannelRecentMap } from '../../src/adapters/discord/channelRecentMap.js';
import { RecentMap } from '../../src/adapters/discord/recentMap.js';
import { OldestFirst } from '../../src/adapters/oldestFirst.js';
import { SettledKeys } from '../../src/adapters/store/memory/settledKeys.js';

describe('OldestFirst', () => {
  it('takes the oldest item still current, skipping those that stopped being current', () => {
    const live = new Set(['a', 'b', 'c', 'd']);
    const order = new OldestFirst<string>((k) => live.has(k));
    for (const k of ['a', 'b', 'c', 'd']) order.push(k, live.size);
    live.delete('a');
    live.delete('c');
    expect(order.takeOldest()).toBe('b');
    expect(order.takeOldest()).toBe('d');
    expect(order.takeOldest()).toBeUndefined();
    expect(order.length).toBe(0);
  });

  it('stays within twice the live items when items stop being current without being taken', () => {
    const live = new Set<number>();
    const order = new OldestFirst<number>((n) => live.has(n));
    for (let n = 0; n < 100_000; n++) {
      live.add(n);
      order.push(n, live.size);
      if (n >= 10) live.delete(n - 10); // deleted, never taken
    }
    expect(order.length).toBeLessThanOrEqual(2 * live.size + 64);
    expect(order.takeOldest()).toBe(99_990);
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
