import type { FloorSetup } from './floorSetup.js';
import type { FloorState } from './floorState.js';
import type { BudgetLane, SuppressionReason, TurnClaim } from './floorTypes.js';

/**
 * Budgets are anchored to the latest human message: `MAX_RESPONSES_PER_MESSAGE` answers to it
 * (main lane) and `BOT_MENTION_CASCADE_LIMIT` answers to avatars' messages after it (cascade
 * lane). Only a human message (or a summon, a human act) opens one, so bot-to-bot loops cannot
 * happen.
 */
export function openBudget(state: FloorState, setup: FloorSetup, anchorMessageId: string): void {
  state.budget = {
    anchorMessageId,
    main: setup.config.maxResponsesPerMessage,
    cascade: setup.config.botCascadeLimit,
  };
}

/**
 * Why the lane cannot pay for another turn, or null if it can (the scheduled lane always can; the
 * thread lane is bounded by the thread itself).
 */
export function laneExhausted(state: FloorState, lane: BudgetLane): SuppressionReason | null {
  if (lane === 'main' && state.budget.main <= 0) return 'budget-main';
  if (lane === 'cascade' && state.budget.cascade <= 0) return 'budget-cascade';
  // Avatars talk among themselves only after a person has spoken, in threads too.
  if (lane === 'thread' && state.budget.anchorMessageId === undefined) return 'budget-cascade';
  return null;
}

/** Takes one turn from the lane. */
export function spendBudget(state: FloorState, lane: BudgetLane): void {
  if (lane === 'main') state.budget.main--;
  else if (lane === 'cascade') state.budget.cascade--;
}

/** Gives a released claim's turn back, if the budget it drew on is still the live one. */
export function refundBudget(state: FloorState, claim: TurnClaim): void {
  if (claim.anchorMessageId !== state.budget.anchorMessageId) return;
  if (claim.lane === 'main') state.budget.main++;
  else if (claim.lane === 'cascade') state.budget.cascade++;
}
