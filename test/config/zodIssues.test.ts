import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { zodIssues } from '../../src/config/zodIssues.js';

const schema = z.object({ a: z.string(), b: z.object({ c: z.number() }), d: z.boolean() });
const failed = (value: unknown): z.ZodError => {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error('expected a failed parse');
  return parsed.error;
};

describe('zodIssues', () => {
  it('writes path: message per issue, joined by "; ", naming the root when a path is empty', () => {
    expect(zodIssues(failed({ a: 1, b: { c: 'x' }, d: true }))).toBe(
      'a: Invalid input: expected string, received number; b.c: Invalid input: expected number, received string',
    );
    expect(zodIssues(failed('text'), '(body)')).toBe(
      '(body): Invalid input: expected object, received string',
    );
  });

  it('puts the prefix before every path but not before the root name', () => {
    expect(zodIssues(failed({ a: 'x', b: { c: 'y' }, d: true }), 'avatars', { prefix: 'avatars.' })).toBe(
      'avatars.b.c: Invalid input: expected number, received string',
    );
    expect(zodIssues(failed(3), 'avatars', { prefix: 'avatars.' })).toBe(
      'avatars: Invalid input: expected object, received number',
    );
  });

  it('writes at most limit issues', () => {
    const error = failed({});
    expect(error.issues).toHaveLength(3);
    expect(zodIssues(error, 'input', { limit: 2 }).split('; ')).toEqual([
      'a: Invalid input: expected string, received undefined',
      'b: Invalid input: expected object, received undefined',
    ]);
  });
});
