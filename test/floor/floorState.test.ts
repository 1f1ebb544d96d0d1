/**
 * The floor's rules as functions over its state record, each checked on its own: budgets, thread
 * reservations and the bound on remembered threads, owed follow-ups, and the state record as its
 * snapshot.
 */
import { describe, expect, it } from 'vitest';
import { defaultCoordinationConfig } from '../../src/config/coordinationConfig.js';
import { laneExhausted, openBudget, refundBudget, spendBudget } from '../../src/floor/budgets.js';
import { claimTurn } from '../../src/floor/claims.js';
import { createFloorSetup } from '../../src/floor/floorSetup.js';
import { floorSnapshotSchema } from '../../src/floor/floorSnapshotSchema.js';
import { restoreFloorState, snapshotOf } from '../../src/floor/floorSnapshots.js';
import { createFloorState } from '../../src/floor/floorState.js';
import type { FloorEffect, TurnClaim } from '../../src/floor/floorTypes.js';
import { ensurePresence } from '../../src/floor/presences.js';
import { fireDueFollowUps, nextFollowUpDue } from '../../src/floor/scheduledTurns.js';
import {
  ENDED_THREADS_REMEMBERED,
  openThread,
  stepThread,
  threadHasRoom,
  unreserveThread,
} from '../../src/floor/threads.js';

const roster = [
  { id: 'luna', name: 'Luna' },
  { id: 'milo', name: 'Milo' },
];
const config = { ...defaultCoordinationConfig, maxResponsesPerMessage: 2, botCascadeLimit: 1 };

function floor() {
  const setup = createFloorSetup(config, roster);
  const state = createFloorState('ch', 'e1', 1_000);
  ensurePresence(state, setup, 'luna', 1_000);
  ensurePresence(state, setup, 'milo', 1_000);
  return { setup, state };
}

describe('budgets', () => {
  it('pay for turns from the live anchor, and take back only what was drawn on it', () => {
    const { setup, state } = floor();
    expect(laneExhausted(state, 'main')).toBe('budget-main'); // no human message yet
    openBudget(state, setup, 'h1');
    spendBudget(state, 'main');
    spendBudget(state, 'main');
    expect(laneExhausted(state, 'main')).toBe('budget-main');
    expect(laneExhausted(state, 'scheduled')).toBeNull();
    const claim = { anchorMessageId: 'h1', lane: 'main' } as TurnClaim;
    refundBudget(state, claim);
    expect(state.budget.main).toBe(1);
    openBudget(state, setup, 'h2');
    refundBudget(state, claim); // drawn on h1: h2's budget is not topped up
    expect(state.budget).toEqual({ anchorMessageId: 'h2', main: 2, cascade: 1 });
  });
});

describe('threads', () => {
  it('count claimed turns against the limit until they are delivered or released', () => {
    const { setup, state } = floor();
    const effects: FloorEffect[] = [];
    const id = openThread(state, setup, 'mention', ['luna', 'milo'], 1, 60_000, 1_000, effects);
    expect(effects).toMatchObject([{ type: 'thread.opened', threadId: 'ch:th1', maxTurns: 1 }]);
    const thread = state.threads.get(id);
    if (!thread) throw new Error('no thread');
    claimTurn(
      state,
      setup,
      {
        avatarId: 'milo',
        kind: 'follow-up',
        rung: 'follow-up',
        reason: 'r',
        lane: 'scheduled',
        anchorMessageId: 'a',
        threadId: id,
      },
      effects,
    );
    expect(threadHasRoom(state, thread)).toBe(false);
    unreserveThread(state, id);
    expect(threadHasRoom(state, thread)).toBe(true);
  });

  it('remember an ended thread only while a pending turn can name it, besides the latest', () => {
    const { setup, state } = floor();
    const effects: FloorEffect[] = [];
    for (let i = 0; i < 70; i++) {
      const id = openThread(state, setup, 'mention', ['luna', 'milo'], 4, 10, 1_000, effects);
      stepThread(state, setup, id, { type: 'thread.tick', at: 2_000 }, effects);
    }
    expect(state.threads.size).toBe(0);
    expect([...state.endedThreads]).toEqual([['ch:th70', 'expired']]);
  });

  it(`remember at most ${ENDED_THREADS_REMEMBERED} ended threads that turns in flight still name, forgetting the oldest`, () => {
    const { setup, state } = floor();
    const effects: FloorEffect[] = [];
    for (let i = 0; i < 70; i++) {
      const id = openThread(state, setup, 'mention', ['luna', 'milo'], 4, 10, 1_000, effects);
      // A turn still on its way in this thread: its delivery must be recognised as late.
      state.inFlight.set(`t${i}`, { turnId: `t${i}`, threadId: id } as TurnClaim);
      stepThread(state, setup, id, { type: 'thread.tick', at: 2_000 }, effects);
    }
    expect(state.endedThreads.size).toBe(ENDED_THREADS_REMEMBERED);
    expect(state.endedThreads.has(`ch:th${70 - ENDED_THREADS_REMEMBERED}`)).toBe(false);
    expect(state.endedThreads.get(`ch:th${71 - ENDED_THREADS_REMEMBERED}`)).toBe('expired');
  });
});

describe('owed follow-ups', () => {
  it('are due only for a free avatar, and claimed once', () => {
    const { setup, state } = floor();
    state.followUps.push({ avatarId: 'luna', dueAt: 5_000, anchorMessageId: 's1', summonerName: 'Ann' });
    expect(nextFollowUpDue(state)).toBe(5_000);
    const effects: FloorEffect[] = [];
    fireDueFollowUps(state, setup, effects);
    expect(effects).toEqual([]); // not due yet
    state.now = 5_000;
    fireDueFollowUps(state, setup, effects);
    expect(effects).toMatchObject([{ type: 'turn.claimed', turn: { avatarId: 'luna', rung: 'follow-up' } }]);
    expect(state.followUps).toEqual([]);
    expect(nextFollowUpDue(state)).toBeUndefined();
  });
});

describe('the state record as a snapshot', () => {
  it('is what the stored schema reads, and restores to the same record', () => {
    const { setup, state } = floor();
    openBudget(state, setup, 'h1');
    openThread(state, setup, 'reply', ['luna', 'milo'], 4, 60_000, 1_000, []);
    state.followUps.push({ avatarId: 'milo', dueAt: 9_000, anchorMessageId: 'h1', summonerName: 'Ann' });
    const snapshot = snapshotOf(state);
    expect(floorSnapshotSchema.parse(JSON.parse(JSON.stringify(snapshot)))).toEqual(snapshot);
    const again = restoreFloorState(floorSnapshotSchema.parse(snapshot), setup);
    expect(snapshotOf(again)).toEqual(snapshot);
    expect(again.presences.get('luna')?.context.settings).toBe(setup.settings);
  });
});
