/**
 * What reading a stored floor says when it cannot, and what a version-1 document keeps when it is
 * read: its goodbyes, arrivals, thread backoff and each thread's extension and sentiment, by the
 * fast reader and the schema alike.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultCoordinationConfig } from '../../src/config/coordinationConfig.js';
import { ChannelFloor } from '../../src/floor/channelFloor.js';
import { FloorSnapshotError } from '../../src/floor/floorSnapshotSchema.js';
import { floorSnapshotV1Schema } from '../../src/floor/floorSnapshotV1.js';
import { readFloorSnapshot } from '../../src/floor/readFloorSnapshot.js';
import { parseFloorSnapshotV1Fast } from '../../src/floor/snapshotFastPathV1.js';

type Doc = Record<string, unknown>;
const v1Floor = (): Doc => JSON.parse(readFileSync('test/fixtures/channelFloor.v1.json', 'utf8')) as Doc;

function thrownBy(read: () => unknown): unknown {
  try {
    read();
  } catch (error) {
    return error;
  }
  return undefined;
}

/** The version-1 document with every field version 1 kept only later. */
function v1WithLaterFields(): Doc {
  const doc = v1Floor();
  const threads = doc.threads as [string, { context: Doc }][];
  for (const [, thread] of threads) {
    thread.context.extensionMs = 45_000;
    thread.context.sentiment = { sum: -3, turns: 2 };
  }
  doc.departed = [['zoe', 51_000]];
  doc.arrivals = [['tom', { at: 52_000, reactedBy: { id: 'u1', name: 'Ana' } }]];
  doc.threadBackoff = [['luna|tom', { endedAt: 50_000, level: 2, until: 110_000 }]];
  return doc;
}

describe('reading a stored floor', () => {
  it('refuses a document that is not a floor, naming the channel', () => {
    for (const doc of [{ format: 'something.else', version: 2 }, null, 'text']) {
      const error = thrownBy(() => readFloorSnapshot(doc, 'general'));
      expect(FloorSnapshotError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'TROUPE_SNAPSHOT_INVALID', details: { channelId: 'general' } });
      expect((error as Error).name).toBe('FloorSnapshotError');
      expect((error as Error).message).toBe(
        'The stored state of channel general cannot be restored (not a Troupe channel floor); the channel starts fresh.',
      );
    }
  });

  it('refuses a newer version and says which versions it reads', () => {
    const doc = { ...v1Floor(), version: 3 };
    const error = thrownBy(() => readFloorSnapshot(doc, 'general'));
    expect((error as Error).message).toContain('(snapshot version 3, this Troupe reads 1 to 2)');
  });

  it('names the field a damaged version-1 document gets wrong', () => {
    const doc = { ...v1Floor(), turnSeq: 'seven' };
    const error = thrownBy(() => readFloorSnapshot(doc, 'general'));
    expect(FloorSnapshotError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/\(turnSeq: [^;)]+\)/);
  });

  it('refuses a presence in a state its machine lacks, and the next floor built is a fresh one', () => {
    const options = {
      channelId: 'ch',
      config: defaultCoordinationConfig,
      roster: [{ id: 'luna', name: 'Luna' }],
    };
    const stored = JSON.parse(JSON.stringify(new ChannelFloor({ ...options, present: ['luna'] }).snapshot()));
    stored.presences[0][1].state = { present: { mode: 'flying', turn: 'ready' } };
    const error = thrownBy(() => ChannelFloor.restore(stored, options));
    expect(FloorSnapshotError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('flying');
    const fresh = new ChannelFloor({ ...options, at: 5 });
    expect(fresh.snapshot().presences).toEqual([]);
    expect(fresh.snapshotTime()).toBe(5);
  });

  it('tells its own error from anything else', () => {
    for (const other of [
      null,
      undefined,
      'TROUPE_SNAPSHOT_INVALID',
      7,
      new Error('x'),
      { code: 'TROUPE_SNAPSHOT_INVALID' },
    ])
      expect(FloorSnapshotError.isInstance(other)).toBe(false);
    expect(FloorSnapshotError.isInstance(new FloorSnapshotError('c', 'r'))).toBe(true);
  });
});

describe('a version-1 document with the fields kept later', () => {
  it('is read by the fast reader exactly as by the schema, key order included', () => {
    const doc = v1WithLaterFields();
    const fast = parseFloorSnapshotV1Fast(doc);
    expect(fast).toBeDefined();
    expect(JSON.stringify(fast)).toBe(JSON.stringify(floorSnapshotV1Schema.parse(doc)));
  });

  it('keeps goodbyes, arrivals, backoff, extension and sentiment through the migration', () => {
    const floor = readFloorSnapshot(v1WithLaterFields(), 'ch');
    expect(floor.version).toBe(2);
    expect(floor.departed).toEqual([['zoe', 51_000]]);
    expect(floor.arrivals).toEqual([['tom', { at: 52_000, reactedBy: { id: 'u1', name: 'Ana' } }]]);
    expect(floor.threadBackoff).toEqual([['luna|tom', { endedAt: 50_000, level: 2, until: 110_000 }]]);
    for (const [, thread] of floor.threads) {
      expect(JSON.stringify(thread)).toContain('"extensionMs":45000');
      expect(JSON.stringify(thread)).toContain('"sentiment":{"sum":-3,"turns":2}');
    }
  });
});
