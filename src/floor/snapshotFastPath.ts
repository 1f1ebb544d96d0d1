import { FLOOR_SNAPSHOT_FORMAT, FLOOR_SNAPSHOT_VERSION, type FloorSnapshot } from './floorSnapshotSchema.js';
import {
  exactKeys,
  listOf,
  optionalKey,
  pairsOf,
  plainObject,
  recordOf,
  stateValueIn,
} from './snapshotChecks.js';
import {
  bool,
  budgetLane,
  count,
  fail,
  id,
  int,
  num,
  numOrNull,
  type Obj,
  readFast,
  rung,
  str,
  strOrNull,
  threadMode,
  threadMood,
  threadOutcome,
  turnKind,
  yes,
} from './snapshotReading.js';

/**
 * The input itself, typed, when it is exactly what `floorSnapshotSchema.safeParse(input).data`
 * would be; `undefined` for anything else, and the schema then decides and says what is wrong.
 *
 * Restoring many channels is mostly schema work (a floor's presences and threads are a few hundred
 * fields), and the generic parser spends most of it copying. A snapshot read from JSON already is
 * the parser's output when every field fits and no object holds a key the schema does not know, so
 * this checks that in place, with the schema's rules (finite numbers, safe integers, non-empty ids,
 * the same enumerations, tuples of exactly two), and copies nothing: the floor copies what it keeps.
 * Where its rules and the parser's could part (an object that is not plain, an unknown key, symbol
 * keys in a record, a `__proto__` key), it gives up rather than guess. A test holds the two to the
 * same answer on valid and damaged snapshots.
 */
export function parseFloorSnapshotFast(input: unknown): FloorSnapshot | undefined {
  return readFast(input, floorSnapshot);
}

const numbers = (v: unknown) => recordOf(v, num);

function attention(v: unknown): void {
  const o = plainObject(v);
  num(o.value);
  num(o.at);
  exactKeys(o, 2);
}

function presenceClaim(v: unknown): void {
  const o = plainObject(v);
  str(o.turnId);
  rung(o.rung);
  num(o.claimedAt);
  exactKeys(o, 3);
}

/**
 * One pass over the presence's keys (most presences leave most optional fields out, so looking each
 * up by name costs more than reading the few that are there). An unknown key gives up.
 */
function presence(v: unknown): void {
  const o = plainObject(v);
  let required = 0;
  for (const key in o) {
    const x = o[key];
    switch (key) {
      case 'now':
        num(x);
        required++;
        break;
      case 'attention':
        attention(x);
        required++;
        break;
      case 'summonTurns':
      case 'grantedAt':
      case 'conversingUntil':
      case 'lastSpokeAt':
      case 'cooldownUntil':
      case 'lastMentionAt':
      case 'delivered':
        if (x !== undefined) num(x);
        break;
      case 'state':
        if (x !== undefined) stateValueIn(x);
        break;
      case 'lastMentionBy':
        if (x !== undefined) str(x);
        break;
      case 'affinity':
        if (x !== undefined) numbers(x);
        break;
      case 'claim':
        if (x !== undefined) presenceClaim(x);
        break;
      default:
        fail();
    }
  }
  if (required !== 2) fail();
}

function sentiment(v: unknown): void {
  const o = plainObject(v);
  num(o.sum);
  num(o.turns);
  exactKeys(o, 2);
}

function thread(v: unknown): void {
  const o = plainObject(v);
  stateValueIn(o.state);
  threadMode(o.mode);
  listOf(o.participants, str);
  listOf(o.departed, str);
  for (const key of THREAD_NUMBERS) num(o[key]);
  bool(o.extendOnActivity);
  numOrNull(o.quietDeadline);
  strOrNull(o.lastSpeakerId);
  strOrNull(o.detail);
  sentiment(o.sentiment);
  exactKeys(o, 9 + THREAD_NUMBERS.length);
}

const THREAD_NUMBERS = [
  'maxTurns',
  'ttlMs',
  'quietMs',
  'extensionMs',
  'turnCount',
  'startedAt',
  'now',
  'lastActivityAt',
  'expiresAt',
] as const;

function turnContext(v: unknown): void {
  const o = plainObject(v);
  listOf(o.presentNames, str);
  listOf(o.threadPartnerNames, str);
  bool(o.closing);
  const optional =
    optionalKey(o, 'triggerText', str) +
    optionalKey(o, 'addressedByName', str) +
    optionalKey(o, 'addressedById', str) +
    optionalKey(o, 'threadTurn', num) +
    optionalKey(o, 'threadMaxTurns', num) +
    optionalKey(o, 'maxChars', num) +
    optionalKey(o, 'alreadyPresent', yes) +
    optionalKey(o, 'threadMood', threadMood);
  exactKeys(o, 3 + optional);
}

/** The fields a granted turn and a turn the floor owes have in common; how many keys they are. */
function turnSpec(o: Obj): number {
  str(o.avatarId);
  turnKind(o.kind);
  rung(o.rung);
  str(o.reason);
  budgetLane(o.lane);
  str(o.anchorMessageId);
  return 6 + optionalKey(o, 'triggerMessageId', str) + optionalKey(o, 'threadId', str);
}

function turnClaim(v: unknown): void {
  const o = plainObject(v);
  str(o.turnId);
  num(o.claimedAt);
  turnContext(o.context);
  exactKeys(o, 3 + turnSpec(o));
}

function person(v: unknown): void {
  const o = plainObject(v);
  str(o.id);
  str(o.name);
  exactKeys(o, 2);
}

function claimSpec(v: unknown): void {
  const o = plainObject(v);
  const optional =
    optionalKey(o, 'triggerText', str) +
    optionalKey(o, 'addressedBy', person) +
    optionalKey(o, 'alreadyPresent', yes);
  exactKeys(o, turnSpec(o) + optional);
}

function deferredAnswer(v: unknown): void {
  const o = plainObject(v);
  claimSpec(o.spec);
  str(o.messageId);
  exactKeys(o, 2);
}

function followUp(v: unknown): void {
  const o = plainObject(v);
  str(o.avatarId);
  num(o.dueAt);
  str(o.anchorMessageId);
  str(o.summonerName);
  exactKeys(o, 4 + optionalKey(o, 'second', yes));
}

function arrival(v: unknown): void {
  const o = plainObject(v);
  num(o.at);
  exactKeys(o, 1 + optionalKey(o, 'reactedBy', person));
}

function backoff(v: unknown): void {
  const o = plainObject(v);
  num(o.endedAt);
  num(o.level);
  num(o.until);
  exactKeys(o, 3);
}

function budget(v: unknown): void {
  const o = plainObject(v);
  num(o.main);
  num(o.cascade);
  exactKeys(o, 2 + optionalKey(o, 'anchorMessageId', str));
}

function floorSnapshot(v: unknown): FloorSnapshot {
  const o = plainObject(v);
  if (o.format !== FLOOR_SNAPSHOT_FORMAT || o.version !== FLOOR_SNAPSHOT_VERSION) fail();
  id(o.channelId);
  id(o.epoch);
  num(o.now);
  count(o.turnSeq);
  count(o.threadSeq);
  pairsOf(o.presences, presence);
  pairsOf(o.threads, thread);
  pairsOf(o.endedThreads, threadOutcome);
  listOf(o.inFlight, turnClaim);
  pairsOf(o.threadReservations, int);
  listOf(o.followUps, followUp);
  pairsOf(o.deferred, deferredAnswer);
  pairsOf(o.pendingGreetings, claimSpec);
  pairsOf(o.departed, num);
  pairsOf(o.arrivals, arrival);
  pairsOf(o.threadBackoff, backoff);
  budget(o.budget);
  const optional =
    optionalKey(o, 'avatarMessages', (x) => listOf(x, num)) +
    optionalKey(o, 'capNotices', (x) => pairsOf(x, num));
  exactKeys(o, 19 + optional);
  return o as unknown as FloorSnapshot;
}
