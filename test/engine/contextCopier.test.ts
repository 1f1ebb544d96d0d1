import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { createContextCopier } from '../../src/engine/contextCopier.js';

describe('createContextCopier: a copy as a spread makes it', () => {
  it('copies every own enumerable key, in order, into a fresh object that shares the values', () => {
    const copy = createContextCopier();
    const nested = { value: 1 };
    const context = { a: 1, b: null, c: 'x', nested, 'not an identifier': true, '0': 'zero' };
    const first = copy(context);
    expect(first).not.toBe(context);
    expect(first).toStrictEqual({ ...context });
    expect(Object.keys(first)).toEqual(Object.keys(context));
    expect(first.nested).toBe(nested);
    first.a = 2;
    expect(context.a).toBe(1);
  });

  it('follows a context whose keys change (a key added by an assign), never dropping or inventing one', () => {
    const copy = createContextCopier();
    expect(copy({ a: 1 })).toStrictEqual({ a: 1 });
    expect(copy({ a: 1, b: 2 })).toStrictEqual({ a: 1, b: 2 });
    expect(copy({ b: 2, a: 1 })).toStrictEqual({ b: 2, a: 1 });
    expect(copy({ a: 3 })).toStrictEqual({ a: 3 });
    expect('b' in copy({ a: 3 })).toBe(false);
  });

  it('cannot be made to run code or set a prototype by its keys', () => {
    const copy = createContextCopier();
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "x\\"]; throw 1; //": 1, "\\u2028": 2}');
    const copied = copy(hostile);
    expect(copied).toStrictEqual({ ...hostile });
    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    const injected = copy({ 'a"]; globalThis.hacked = 1; //': 1 });
    expect(Object.keys(injected)).toEqual(['a"]; globalThis.hacked = 1; //']);
    expect((globalThis as { hacked?: number }).hacked).toBeUndefined();
  });

  it('keeps symbol keys, as a spread does', () => {
    const copy = createContextCopier();
    const s = Symbol('s');
    const copied = copy({ a: 1, [s]: 2 });
    expect(copied[s as unknown as string]).toBe(2);
    // The same string keys as a shape already met, and a symbol besides.
    expect(copy({ b: 1 })).toStrictEqual({ b: 1 });
    expect(copy({ b: 1, [s]: 3 })[s as unknown as string]).toBe(3);
  });

  it('leaves out non-enumerable keys, as a spread does', () => {
    const copy = createContextCopier();
    expect(copy({ a: 1 })).toStrictEqual({ a: 1 });
    const hidden = Object.defineProperty({ a: 1 }, 'h', { value: 2, enumerable: false });
    expect(Object.keys(copy(hidden))).toEqual(['a']);
  });

  it('copies own keys only when the prototype has enumerable keys of its own', () => {
    const copy = createContextCopier();
    expect(copy({ a: 1 })).toStrictEqual({ a: 1 });
    // Its own keys are a shape already met; for-in would also list the inherited one.
    const inheriting = Object.assign(Object.create({ inherited: true }), { a: 2 });
    const copied = copy(inheriting);
    expect(Object.keys(copied)).toEqual(['a']);
    expect(copied.a).toBe(2);
    expect('inherited' in copied).toBe(false);
    // The other way round: the shape has a key this context only inherits.
    expect(copy({ a: 1, inherited: 0 })).toStrictEqual({ a: 1, inherited: 0 });
    expect(Object.keys(copy(Object.assign(Object.create({ inherited: 9 }), { a: 3 })))).toEqual(['a']);
  });

  it('equals a spread on any sequence of records, past its number of shapes', () => {
    const copy = createContextCopier();
    const record = fc.dictionary(
      fc.string({ maxLength: 6 }),
      fc.oneof(fc.integer(), fc.constant(null), fc.string()),
      {
        maxKeys: 6,
      },
    );
    fc.assert(
      fc.property(fc.array(record, { maxLength: 30 }), (records) => {
        for (const r of records) {
          const copied = copy(r);
          expect(copied).toStrictEqual({ ...r });
          expect(Object.keys(copied)).toEqual(Object.keys(r));
        }
      }),
    );
  });

  it('copies by spread in a process that refuses to make functions from text', async () => {
    // As under --disallow-code-generation-from-strings: the Function constructor throws.
    vi.stubGlobal('Function', function refused() {
      throw new EvalError('Code generation from strings disallowed for this context');
    });
    try {
      vi.resetModules();
      const fresh = await import('../../src/engine/contextCopier.js');
      const copy = fresh.createContextCopier();
      expect(copy({ x: 1, y: 'two' })).toStrictEqual({ x: 1, y: 'two' });
      expect(copy({ x: 3, y: 'four' })).toStrictEqual({ x: 3, y: 'four' });
      expect(fresh.createContextCopier()({ z: null })).toStrictEqual({ z: null });
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
