/**
 * The fast reader of floor snapshots gives exactly what the schema gives, or gives up: on stored
 * floors from random traffic (and the v1 fixture) it returns the schema's output, key order included;
 * on every damaged variant of them the schema refuses, it returns nothing, so a corrupt snapshot is
 * still refused by ChannelFloor.restore with TROUPE_SNAPSHOT_INVALID and the schema's own reasons.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultCoordinationConfig } from '../src/config/coordinationConfig.js';
import { ChannelFloor } from '../src/machines/channelFloor.js';
import { parseFloorSnapshotFast } from '../src/machines/floor/snapshotFastPath.js';
import { FloorSnapshotError, floorSnapshotSchema } from '../src/machines/floorSnapshot.js';
import { FloorDriver, trafficArb, trafficRoster } from './support/floorTraffic.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** JSON snapshots taken along random traffic, and the stored v1 document. */
function storedFloors(): Json[] {
  const floors: Json[] = [JSON.parse(readFileSync('test/fixtures/channelFloor.v1.json', 'utf8'))];
  for (const traffic of fc.sample(trafficArb({ maxSteps: 40 }), { numRuns: 40, seed: 24 })) {
    let events = 0;
    new FloorDriver(traffic, (_entry, floor) => {
      if (events++ % 7 === 3) floors.push(JSON.parse(JSON.stringify(floor.snapshot())));
    }).finish();
  }
  return floors;
}

/** Every path to a value in `value`, arrays' items by index. */
function paths(value: Json, at: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [at];
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) out.push(...paths(v, [...at, i]));
  } else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, k]));
  return out;
}

/** The path with array indices as `*`: which field of the schema it is. */
const field = (path: (string | number)[]) => path.map((p) => (typeof p === 'number' ? '*' : p)).join('.');

/** A copy of `root` with the value at `path` replaced (`remove`: the key deleted, or the item). */
function withChange(root: Json, path: (string | number)[], change: { to: unknown } | 'remove'): unknown {
  if (path.length === 0) return change === 'remove' ? undefined : change.to;
  const copy: Json = structuredClone(root);
  let parent = copy as Record<string | number, unknown>;
  for (const p of path.slice(0, -1)) parent = parent[p] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (change === 'remove') {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else parent[last] = change.to;
  return copy;
}

const REPLACEMENTS: unknown[] = [
  null,
  undefined,
  '',
  'reply',
  'x',
  0,
  -0,
  -1,
  1.5,
  2 ** 53,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  {},
  [],
  ['a'],
  ['a', 1],
  ['a', 1, 2],
  { value: 'idle', context: {} },
  JSON.parse('{"__proto__": 1}'),
  new Date(0),
];

/** The fast reader agrees with the schema on `input`; returns whether the fast reader took it. */
function agrees(input: unknown): boolean {
  const schema = floorSnapshotSchema.safeParse(input);
  const fast = parseFloorSnapshotFast(input);
  if (!schema.success) {
    expect(fast).toBeUndefined();
    return false;
  }
  if (fast === undefined) return false;
  expect(fast).toStrictEqual(schema.data);
  expect(JSON.stringify(fast)).toBe(JSON.stringify(schema.data));
  return true;
}

describe('the fast reader of floor snapshots', () => {
  const floors = storedFloors();
  // The floors between them reach every field a snapshot has (deferred answers, arrivals, backoff…).
  const byField = new Map<string, { floor: Json; path: (string | number)[] }>();
  for (const floor of floors)
    for (const path of paths(floor)) if (!byField.has(field(path))) byField.set(field(path), { floor, path });

  it('returns what the schema returns for every stored floor, key order included', () => {
    expect(floors.length).toBeGreaterThan(50);
    for (const floor of floors) expect(agrees(floor)).toBe(true);
    for (const f of ['deferred', 'pendingGreetings', 'followUps', 'arrivals', 'threadBackoff', 'departed'])
      expect([...byField.keys()].some((k) => k.startsWith(`${f}.*`))).toBe(true);
  });

  it('never takes a damaged floor the schema refuses, and agrees on every change it takes', () => {
    let refused = 0;
    let taken = 0;
    for (const { floor, path } of byField.values()) {
      const variants: unknown[] = [withChange(floor, path, 'remove')];
      for (const to of REPLACEMENTS) variants.push(withChange(floor, path, { to }));
      // An unknown key where an object is: dropped by both.
      const here = path.reduce<unknown>((v, p) => (v as Record<string | number, unknown>)[p], floor);
      if (here !== null && typeof here === 'object' && !Array.isArray(here))
        variants.push(withChange(floor, path, { to: { ...here, extra: 1 } }));
      for (const variant of variants) {
        if (!floorSnapshotSchema.safeParse(variant).success) refused++;
        if (agrees(variant)) taken++;
      }
    }
    expect(refused).toBeGreaterThan(1_000);
    expect(taken).toBeGreaterThan(100);
  });

  it('leaves a corrupt snapshot to the schema: refused with TROUPE_SNAPSHOT_INVALID and its reasons', () => {
    const options = { channelId: 'ch', config: defaultCoordinationConfig, roster: [...trafficRoster] };
    const floor = floors.find((f) => paths(f).some((p) => field(p) === 'threads.*.*.context.ttlMs')) as Json;
    const threadTtl = paths(floor).find((p) => field(p) === 'threads.*.*.context.ttlMs') as (
      | string
      | number
    )[];
    const corrupt = [
      withChange(floor, threadTtl, { to: '60000' }),
      withChange(floor, ['presences', 0, 1, 'context', 'attention'], 'remove'),
      withChange(floor, ['turnSeq'], { to: 1.5 }),
      withChange(floor, ['presences', 0], { to: ['luna'] }),
    ];
    for (const snapshot of corrupt) {
      const reasons = floorSnapshotSchema.safeParse(snapshot).error?.issues ?? [];
      expect(reasons.length).toBeGreaterThan(0);
      const thrown = (() => {
        try {
          ChannelFloor.restore(snapshot, options);
        } catch (error) {
          return error;
        }
        return undefined;
      })();
      expect(FloorSnapshotError.isInstance(thrown)).toBe(true);
      expect(thrown).toMatchObject({ code: 'TROUPE_SNAPSHOT_INVALID' });
      for (const issue of reasons)
        expect((thrown as Error).message).toContain(`${issue.path.join('.')}: ${issue.message}`);
    }
  });
});
