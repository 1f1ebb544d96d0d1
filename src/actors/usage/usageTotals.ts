import { costOf, isOfflineModel, type ModelPrices } from '../../config/modelPrices.js';
import type { ModelCallUsage, UsageTotals } from '../../ports/usage.js';

/** Totals of no calls. */
export function emptyTotals(): UsageTotals {
  return {
    calls: 0,
    callsWithoutUsage: 0,
    inputTokens: 0,
    outputTokens: 0,
    characters: 0,
    costUsd: 0,
    unpricedCalls: 0,
  };
}

/** Adds `more` into `into` (in place) and returns `into`. */
export function addTotals(into: UsageTotals, more: Readonly<UsageTotals>): UsageTotals {
  into.calls += more.calls;
  into.callsWithoutUsage += more.callsWithoutUsage;
  into.inputTokens += more.inputTokens;
  into.outputTokens += more.outputTokens;
  into.characters += more.characters;
  into.costUsd += more.costUsd;
  into.unpricedCalls += more.unpricedCalls;
  return into;
}

/** A token count a provider reported, or undefined for none (or for one that is not a count). */
const tokens = (n: number | undefined): number | undefined =>
  typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.round(n) : undefined;

/**
 * One call as totals. A call without reported tokens counts in `callsWithoutUsage` with no tokens
 * and no cost (its usage is unknown, not zero); a call with tokens but no price for its model counts
 * in `unpricedCalls`. The offline provider reports none and costs nothing: it counts calls and
 * characters only.
 */
export function callTotals(call: ModelCallUsage, prices: ModelPrices): UsageTotals {
  const input = tokens(call.inputTokens);
  const output = tokens(call.outputTokens);
  const characters = Math.max(0, Math.round(call.characters) || 0);
  const totals = emptyTotals();
  totals.calls = 1;
  totals.characters = characters;
  const offline = isOfflineModel(call.model);
  if (input === undefined && output === undefined) {
    if (!offline) totals.callsWithoutUsage = 1;
    return totals;
  }
  totals.inputTokens = input ?? 0;
  totals.outputTokens = output ?? 0;
  const cost = costOf(prices, call.model, totals.inputTokens, totals.outputTokens);
  if (cost === undefined) totals.unpricedCalls = 1;
  else totals.costUsd = cost;
  return totals;
}
