import { describe, expect, it } from 'vitest';
import { KeyRing } from '../../src/adapters/store/memory/keyRing.js';

describe('KeyRing', () => {
  it('holds exactly its capacity and hands back the oldest key, in order, as it wraps', () => {
    const ring = new KeyRing(3);
    expect(['a', 'b', 'c'].map((k) => ring.add(k))).toEqual([undefined, undefined, undefined]);
    expect(['d', 'e', 'f', 'g', 'h', 'i', 'j'].map((k) => ring.add(k))).toEqual([
      'a',
      'b',
      'c',
      'd',
      'e',
      'f',
      'g',
    ]);
  });

  it('with capacity 1 forgets the previous key at once; with 0 keeps nothing', () => {
    const one = new KeyRing(1);
    expect([one.add('a'), one.add('b'), one.add('c')]).toEqual([undefined, 'a', 'b']);
    const none = new KeyRing(0);
    expect([none.add('a'), none.add('b')]).toEqual(['a', 'b']);
  });
});
