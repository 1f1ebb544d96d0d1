import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StateValue } from 'xstate';
import { StateValueIndex } from '../../src/engine/stateValueIndex.js';

const name = fc.constantFrom('a', 'b', 'present', 'mode', 'turn', '', '(', ')', '{}', '"a"');
const stateValue: fc.Arbitrary<StateValue> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, name, tie('object')),
  object: fc.dictionary(name, tie('value'), { maxKeys: 3 }),
})).value as fc.Arbitrary<StateValue>;

describe('StateValueIndex', () => {
  it('finds what was stored for a value, and only for that value (key order counts)', () => {
    fc.assert(
      fc.property(
        fc.array(stateValue, { maxLength: 30 }),
        fc.array(stateValue, { maxLength: 30 }),
        (stored, asked) => {
          const index = new StateValueIndex<string>();
          for (const v of stored) index.set(v, JSON.stringify(v));
          const known = new Set(stored.map((v) => JSON.stringify(v)));
          for (const v of [...stored, ...asked]) {
            const json = JSON.stringify(v);
            expect(index.get(v)).toBe(known.has(json) ? json : undefined);
          }
        },
      ),
      { numRuns: 300, seed: 7 },
    );
  });

  it('tells a string leaf from an object key of the same name, and an empty object from none', () => {
    const index = new StateValueIndex<number>();
    index.set({ a: 'b' }, 1);
    index.set({ a: { b: {} } }, 2);
    index.set({}, 3);
    expect(index.get({ a: 'b' })).toBe(1);
    expect(index.get({ a: { b: {} } })).toBe(2);
    expect(index.get({})).toBe(3);
    expect(index.get('a')).toBeUndefined();
    expect(index.get({ a: {} })).toBeUndefined();
    expect(index.get({ a: 'b', c: 'd' })).toBeUndefined();
  });
});
