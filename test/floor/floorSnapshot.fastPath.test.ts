/**
 * The fast readers of floor snapshots give exactly what their schema gives, or give up: on stored
 * floors from random traffic (version 2) and the stored version-1 document they return the schema's
 * output (the version-2 reader the input itself, checked in place); on every damaged variant of them the schema refuses, they return
 * nothing, so a corrupt snapshot is still refused by ChannelFloor.restore with
 * TROUPE_SNAPSHOT_INVALID and the schema's own reasons.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultCoordinationConfig } from '../../src/config/coordinationConfig.js';
import { ChannelFloor } from '../../src/floor/channelFloor.js';
import { FloorSnapshotError, floorSnapshotSchema } from '../../src/floor/floorSnapshotSchema.js';
import { floorSnapshotV1Schema } from '../../src/floor/floorSnapshotV1.js';
import { parseFloorSnapshotFast } from '../../src/floor/snapshotFastPath.js';
import { parseFloorSnapshotV1Fast } from '../../src/floor/snapshotFastPathV1.js';
import { FloorDriver, trafficArb, trafficRoster } from '../support/floorTraffic.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The stored version-1 document. */
const v1Floor = (): Json => JSON.parse(readFileSync('test/fixtures/channelFloor.v1.json', 'utf8'));

/** JSON snapshots taken along random traffic, and the version-1 document restored and stored again. */
function storedFloors(): Json[] {
  const options = { channelId: 'ch', config: defaultCoordinationConfig, roster: [...trafficRoster] };
  const floors: Json[] = [JSON.parse(JSON.stringify(ChannelFloor.restore(v1Floor(), options).snapshot()))];
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

/** A schema and the fast reader that must agree with it. */
interface Reader {
  schema: { safeParse(input: unknown): { success: boolean; data?: unknown } };
  fast: (input: unknown) => unknown;
}
const V2: Reader = { schema: floorSnapshotSchema, fast: parseFloorSnapshotFast };
const V1: Reader = { schema: floorSnapshotV1Schema, fast: parseFloorSnapshotV1Fast };

/** The fast reader agrees with its schema on `input`; returns whether the fast reader took it. */
function agrees(input: unknown, reader: Reader = V2): boolean {
  const schema = reader.schema.safeParse(input);
  const fast = reader.fast(input);
  if (!schema.success) {
    expect(fast).toBeUndefined();
    return false;
  }
  if (fast === undefined) return false;
  expect(fast).toStrictEqual(schema.data);
  return true;
}

/** One floor per field of a snapshot (the first that has it) and the path to it there. */
function byFieldOf(floors: Json[]): Map<string, { floor: Json; path: (string | number)[] }> {
  const byField = new Map<string, { floor: Json; path: (string | number)[] }>();
  for (const floor of floors)
    for (const path of paths(floor)) if (!byField.has(field(path))) byField.set(field(path), { floor, path });
  return byField;
}

/** Every damaged variant of each field: removed, replaced, an unknown key added where an object is. */
function damagedVariants(byField: Map<string, { floor: Json; path: (string | number)[] }>): unknown[] {
  const variants: unknown[] = [];
  for (const { floor, path } of byField.values()) {
    variants.push(withChange(floor, path, 'remove'));
    for (const to of REPLACEMENTS) variants.push(withChange(floor, path, { to }));
    // An unknown key where an object is: dropped by both.
    const here = path.reduce<unknown>((v, p) => (v as Record<string | number, unknown>)[p], floor);
    if (here !== null && typeof here === 'object' && !Array.isArray(here))
      variants.push(withChange(floor, path, { to: { ...here, extra: 1 } }));
  }
  return variants;
}

describe('the fast reader of version-1 floor snapshots', () => {
  it('returns what the version-1 schema returns for the stored document, and nothing for version 2', () => {
    expect(agrees(v1Floor(), V1)).toBe(true);
    expect(parseFloorSnapshotV1Fast({ ...(v1Floor() as object), version: 2 })).toBeUndefined();
    expect(parseFloorSnapshotFast(v1Floor())).toBeUndefined();
  });

  it('never takes a damaged document the schema refuses, and agrees on every change it takes', () => {
    let refused = 0;
    let taken = 0;
    for (const variant of damagedVariants(byFieldOf([v1Floor()]))) {
      if (!floorSnapshotV1Schema.safeParse(variant).success) refused++;
      if (agrees(variant, V1)) taken++;
    }
    expect(refused).toBeGreaterThan(500);
    expect(taken).toBeGreaterThan(50);
  });
});

describe('the fast reader of floor snapshots', () => {
  const floors = storedFloors();
  // The floors between them reach every field a snapshot has (deferred answers, arrivals, backoff…).
  const byField = byFieldOf(floors);

  it('returns what the schema returns for every stored floor', () => {
    expect(floors.length).toBeGreaterThan(50);
    for (const floor of floors) expect(agrees(floor)).toBe(true);
    for (const f of ['deferred', 'pendingGreetings', 'followUps', 'arrivals', 'threadBackoff', 'departed'])
      expect([...byField.keys()].some((k) => k.startsWith(`${f}.*`))).toBe(true);
    // Every field a presence leaves out at its starting value is also met present.
    for (const f of ['state', 'summonTurns', 'grantedAt', 'conversingUntil', 'lastSpokeAt', 'cooldownUntil'])
      expect(byField.has(`presences.*.*.${f}`)).toBe(true);
    for (const f of ['lastMentionAt', 'lastMentionBy', 'affinity', 'claim', 'delivered'])
      expect(byField.has(`presences.*.*.${f}`)).toBe(true);
  });

  it('never takes a damaged floor the schema refuses, and agrees on every change it takes', () => {
    let refused = 0;
    let taken = 0;
    for (const variant of damagedVariants(byField)) {
      if (!floorSnapshotSchema.safeParse(variant).success) refused++;
      if (agrees(variant)) taken++;
    }
    expect(refused).toBeGreaterThan(1_000);
    expect(taken).toBeGreaterThan(100);
  });

  it('leaves a corrupt snapshot to the schema: refused with TROUPE_SNAPSHOT_INVALID and its reasons', () => {
    const options = { channelId: 'ch', config: defaultCoordinationConfig, roster: [...trafficRoster] };
    const floor = floors.find((f) => paths(f).some((p) => field(p) === 'threads.*.*.ttlMs')) as Json;
    const threadTtl = paths(floor).find((p) => field(p) === 'threads.*.*.ttlMs') as (string | number)[];
    const corrupt = [
      withChange(floor, threadTtl, { to: '60000' }),
      withChange(floor, ['presences', 0, 1, 'attention'], 'remove'),
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

/** Changes every value inside `value` in place: numbers, strings, booleans, arrays grown. */
function scribble(value: Json): void {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) {
      if (v !== null && typeof v === 'object') scribble(v);
      else value[i] = typeof v === 'string' ? `${v}!` : typeof v === 'number' ? v + 1 : v;
    }
    value.push('scribbled');
  } else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      if (v !== null && typeof v === 'object') scribble(v);
      else
        value[k] =
          typeof v === 'string' ? `${v}!` : typeof v === 'number' ? v + 1 : typeof v === 'boolean' ? !v : v;
    }
}

describe('a restored floor and the snapshot it came from', () => {
  it('share nothing: changing the snapshot afterwards leaves the floor as it was', () => {
    const options = { channelId: 'ch', config: defaultCoordinationConfig, roster: [...trafficRoster] };
    const floors = storedFloors();
    const fields = new Set<string>();
    for (const stored of floors) {
      const channel = { ...options, channelId: (stored as { channelId: string }).channelId };
      const input = structuredClone(stored);
      const floor = ChannelFloor.restore(input, channel);
      const before = JSON.stringify(floor.snapshot());
      scribble(input);
      expect(JSON.stringify(floor.snapshot())).toBe(before);
      expect(JSON.stringify(ChannelFloor.restore(stored, channel).snapshot())).toBe(before);
      for (const path of paths(stored)) fields.add(field(path));
    }
    // The floors held every kind of object a restored floor could keep from its snapshot.
    for (const f of [
      'presences.*.*.attention.value',
      'presences.*.*.affinity',
      'presences.*.*.claim.turnId',
      'threads.*.*.participants.*',
      'threads.*.*.sentiment.sum',
      'inFlight.*.context.presentNames.*',
      'deferred.*.*.spec.addressedBy.id',
      'pendingGreetings.*.*.addressedBy.id',
      'arrivals.*.*.reactedBy.id',
    ])
      expect(fields.has(f), f).toBe(true);
  });
});

describe('a snapshot with keys this version does not know', () => {
  it('is restored through the schema, which drops them: the same floor as without them', () => {
    const options = { channelId: 'ch', config: defaultCoordinationConfig, roster: [...trafficRoster] };
    for (const stored of storedFloors().slice(0, 12)) {
      const channel = { ...options, channelId: (stored as { channelId: string }).channelId };
      const extra = structuredClone(stored) as Record<string, unknown> & { presences: [string, object][] };
      extra.writtenBy = 'a later Troupe';
      for (const entry of extra.presences) entry[1] = { ...entry[1], mood: 'curious' };
      expect(parseFloorSnapshotFast(extra)).toBeUndefined();
      // Equal as data (the order of keys follows the path the snapshot took).
      expect(ChannelFloor.restore(extra, channel).snapshot()).toStrictEqual(
        ChannelFloor.restore(stored, channel).snapshot(),
      );
    }
  });
});
