import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Attention, attentionAt, boostAttention } from '../../src/machines/attention.js';

const H = 60_000;
const T0 = 1_700_000_000_000;

describe('attentionAt', () => {
  it('halves every half-life of elapsed time', () => {
    const a: Attention = { value: 0.8, at: T0 };
    expect(attentionAt(a, T0, H)).toBe(0.8);
    expect(attentionAt(a, T0 + H, H)).toBeCloseTo(0.4, 12);
    expect(attentionAt(a, T0 + 2 * H, H)).toBeCloseTo(0.2, 12);
    expect(attentionAt(a, T0 + H / 2, H)).toBeCloseTo(0.8 / Math.SQRT2, 12);
  });

  it('is never compounded by reading it repeatedly', () => {
    const a: Attention = { value: 1, at: T0 };
    const reads = Array.from({ length: 50 }, () => attentionAt(a, T0 + H, H));
    expect(new Set(reads).size).toBe(1);
    expect(reads[0]).toBeCloseTo(0.5, 12);
    expect(a).toEqual({ value: 1, at: T0 }); // reading does not touch the stored value
  });

  it('does not grow for a moment before its last update', () => {
    expect(attentionAt({ value: 0.5, at: T0 }, T0 - 10_000, H)).toBe(0.5);
  });

  it('with a zero half-life, holds only at the instant of the update', () => {
    expect(attentionAt({ value: 0.7, at: T0 }, T0, 0)).toBe(0.7);
    expect(attentionAt({ value: 0.7, at: T0 }, T0 + 1, 0)).toBe(0);
  });

  it('decays monotonically and stays within [0, value] (property)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        (value, d1, d2, halfLife) => {
          const a = { value, at: T0 };
          const [near, far] = d1 <= d2 ? [d1, d2] : [d2, d1];
          const vNear = attentionAt(a, T0 + near, halfLife);
          const vFar = attentionAt(a, T0 + far, halfLife);
          expect(vNear).toBeLessThanOrEqual(value);
          expect(vFar).toBeLessThanOrEqual(vNear);
          expect(vFar).toBeGreaterThanOrEqual(0);
        },
      ),
    );
  });
});

describe('boostAttention', () => {
  it('adds the boost to the decayed value and re-anchors at now', () => {
    const b = boostAttention({ value: 0.8, at: T0 }, T0 + H, H, 0.3);
    expect(b.at).toBe(T0 + H);
    expect(b.value).toBeCloseTo(0.4 + 0.3, 12);
  });

  it('caps at 1', () => {
    expect(boostAttention({ value: 0.9, at: T0 }, T0, H, 0.5)).toEqual({ value: 1, at: T0 });
  });

  it('re-anchoring without a boost does not change what attention reads later (property)', () => {
    // Decay depends only on the time since the value was set, however often it is re-anchored.
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.array(fc.integer({ min: 0, max: 200_000 }), { maxLength: 10 }),
        fc.integer({ min: 0, max: 200_000 }),
        (value, gaps, lastGap) => {
          let a: Attention = { value, at: T0 };
          let t = T0;
          for (const gap of gaps) {
            t += gap;
            a = boostAttention(a, t, H, 0);
          }
          const end = t + lastGap;
          expect(attentionAt(a, end, H)).toBeCloseTo(attentionAt({ value, at: T0 }, end, H), 9);
        },
      ),
    );
  });

  it('is never above 1 nor below the decayed value (property)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.double({ min: 0, max: 2, noNaN: true }),
        (value, elapsed, boost) => {
          const a = { value, at: T0 };
          const b = boostAttention(a, T0 + elapsed, H, boost);
          expect(b.value).toBeLessThanOrEqual(1);
          expect(b.value).toBeGreaterThanOrEqual(Math.min(1, attentionAt(a, T0 + elapsed, H)) - 1e-12);
        },
      ),
    );
  });
});
