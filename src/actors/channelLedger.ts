import { z } from 'zod';
import { FloorDriver } from '../floor/floorDriver.js';
import type { FloorEvent } from '../floor/floorTypes.js';

/**
 * A channel's turn ledger: the floor events applied since its stored snapshot, appended in small
 * entries instead of writing the whole floor again. A restore replays them onto the snapshot
 * through a silent driver (the floor is a pure machine: the same events give the same floor);
 * the next snapshot folds them in and the entries of the older snapshot are deleted.
 */
export const LEDGER = 'channel-ledger';

/** What one ledger entry holds: the events of one write, in the order they were applied. */
export interface LedgerEntry {
  events: FloorEvent[];
}

const WIDTH = 10;
const pad = (n: number) => String(n).padStart(WIDTH, '0');

/**
 * Every ledger entry of a channel starts with this. The key's length comes first, so no channel's
 * prefix is the start of another's (`a` and `a/0000000001` differ in length).
 */
export function ledgerPrefix(channelKey: string): string {
  return `${channelKey.length}:${channelKey}/`;
}

/** The key of entry `seq` (1, 2, …) appended to the snapshot at `version`: ordered by key. */
export function ledgerKey(channelKey: string, version: number, seq: number): string {
  return `${ledgerPrefix(channelKey)}${pad(version)}/${pad(seq)}`;
}

/** The snapshot version and sequence number a ledger key names (undefined: not a ledger key). */
export function parseLedgerKey(
  channelKey: string,
  key: string,
): { version: number; seq: number } | undefined {
  const prefix = ledgerPrefix(channelKey);
  if (!key.startsWith(prefix)) return undefined;
  const match = /^(\d+)\/(\d+)$/.exec(key.slice(prefix.length));
  if (!match) return undefined;
  return { version: Number(match[1]), seq: Number(match[2]) };
}

const text = z.string();
const at = z.number().finite();
const mentionList = z.array(text).optional();
const replyTo = z.object({ messageId: text, avatarId: text.optional() }).optional();

/** A stored floor event: its shape is checked before it is replayed (a bad one quarantines the channel). */
const floorEventSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('message'),
    at,
    messageId: text,
    author: z.discriminatedUnion('kind', [
      z.object({ kind: z.literal('human'), id: text, name: text }),
      z.object({ kind: z.literal('avatar'), id: text }),
    ]),
    text,
    mentions: mentionList,
    replyTo,
  }),
  z.object({
    type: z.literal('summon'),
    at,
    avatarId: text,
    by: z.object({ id: text, name: text }),
    messageId: text.optional(),
  }),
  z.object({ type: z.literal('dismiss'), at, avatarId: text }),
  z.object({
    type: z.literal('avatar.join'),
    at,
    avatar: z.looseObject({ id: text }),
    present: z.boolean().optional(),
  }),
  z.object({ type: z.literal('tick'), at }),
  z.object({ type: z.literal('turn.generated'), at, turnId: text }),
  z.object({
    type: z.literal('turn.delivered'),
    at,
    turnId: text,
    messageId: text,
    text,
    avatarId: text.optional(),
    mentions: mentionList,
    replyTo,
  }),
  z.object({ type: z.literal('turn.failed'), at, turnId: text, reason: text }),
  z.object({ type: z.literal('turn.aborted'), at, turnId: text, reason: text }),
]);

/** One stored ledger entry. */
export const ledgerEntrySchema = z.object({ events: z.array(floorEventSchema) });

/** The floor's part a replay drives: what {@link FloorDriver} needs, and who spoke a turn. */
type ReplayedFloor = ConstructorParameters<typeof FloorDriver>[0]['floor'] & {
  speakerOf?(turnId: string): string | undefined;
};

/**
 * Applies a ledger's events to a restored floor, with no hooks and no timers (nothing is claimed
 * or sent: the turns in flight afterwards are resumed as any restored floor's are). Returns the
 * turns spoken per thread and the message ids seen, as the live channel had them, and per event
 * the avatar whose turn a `turn.delivered` delivered (as the floor knew it just before).
 */
export function replayLedger(
  floor: ReplayedFloor,
  events: readonly FloorEvent[],
  start: { spoken: readonly [string, string, number][]; seen: readonly string[]; now: () => number },
): { spoken: [string, string, number][]; seen: string[]; speakerAt: (string | undefined)[] } {
  const driver = new FloorDriver({
    floor,
    clock: { now: start.now, setTimer: () => ({ id: 0 }), clearTimer: () => undefined },
    spoken: start.spoken,
  });
  const seen = [...start.seen];
  const speakerAt: (string | undefined)[] = [];
  for (const event of events) {
    // A ledger written before deliveries named their avatar: the floor's claim, if it still has it.
    speakerAt.push(
      event.type === 'turn.delivered' ? (event.avatarId ?? floor.speakerOf?.(event.turnId)) : undefined,
    );
    driver.apply(event);
    if (event.type === 'message') seen.push(event.messageId);
  }
  driver.stop();
  return { spoken: driver.spokenCounts(), seen, speakerAt };
}
