import { z } from 'zod';
import type { ModelCallUsage, UsagePurpose, UsageSpender, UsageTotals } from '../../ports/usage.js';

/** The collection usage buckets are stored in. */
export const USAGE_COLLECTION = 'usage';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/**
 * Which call a bucket sums: its UTC hour (`2026-11-28T13`), spender (`avatar:<id>` or `email`),
 * scope, purpose and model. Stored with the sums, so reports need not read keys.
 */
export interface BucketParts {
  hour: string;
  spender: string;
  scope: string;
  purpose: UsagePurpose;
  model: string;
}

/** A stored bucket: its parts and the sums of its calls. */
export type UsageBucketValue = BucketParts & UsageTotals;

const count = z.number().finite().min(0);

/** What a stored bucket must look like to be added to (a damaged one is replaced). */
export const usageBucketSchema = z.object({
  hour: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}$/u),
  spender: z.string(),
  scope: z.string(),
  purpose: z.enum([
    'turn',
    'greeting',
    'follow-up',
    'avatar-creation',
    'triage',
    'agent-step',
    'memory-update',
  ]),
  model: z.string(),
  calls: count,
  callsWithoutUsage: count,
  inputTokens: count,
  outputTokens: count,
  characters: count,
  costUsd: count,
  unpricedCalls: count,
});

let lastHourIndex = Number.NaN;
let lastHour = '';

/** The UTC hour of `hourIndex` (hours since the epoch) as `2026-11-28T13`. */
export function hourText(hourIndex: number): string {
  // Consecutive calls mostly fall in one hour: its text is made once.
  if (hourIndex !== lastHourIndex) {
    lastHour = new Date(hourIndex * HOUR_MS).toISOString().slice(0, 13);
    lastHourIndex = hourIndex;
  }
  return lastHour;
}

/** The key prefix of every bucket of the UTC day `dayIndex` (days since the epoch): `2026-11-28T`. */
export function dayPrefix(dayIndex: number): string {
  return `${new Date(dayIndex * DAY_MS).toISOString().slice(0, 10)}T`;
}

/** When the hour of `hour` (`2026-11-28T13`) starts, epoch ms. */
export function hourStart(hour: string): number {
  return Date.parse(`${hour}:00:00Z`);
}

/** A spender as a bucket writes it: `avatar:<id>`, or `email`. */
export function spenderText(spender: UsageSpender): string {
  return spender.kind === 'avatar' ? `avatar:${spender.id}` : 'email';
}

/** The avatar id of a spender text, or undefined for the email assistant. */
export function avatarOf(spender: string): string | undefined {
  return spender.startsWith('avatar:') ? spender.slice('avatar:'.length) : undefined;
}

/** `|` separates a key's parts: in a part it is written `%7C` (and `%` as `%25`). */
const escapePart = (part: string): string =>
  part.includes('|') || part.includes('%') ? part.replaceAll('%', '%25').replaceAll('|', '%7C') : part;

/** The parts of the bucket a call falls in. */
/**
 * A bucket's stored value, made field by field (one object with fast properties: a flush makes
 * thousands, and keeps each until the next).
 */
export function bucketValue(parts: BucketParts, totals: Readonly<UsageTotals>): UsageBucketValue {
  return {
    hour: parts.hour,
    spender: parts.spender,
    scope: parts.scope,
    purpose: parts.purpose,
    model: parts.model,
    calls: totals.calls,
    callsWithoutUsage: totals.callsWithoutUsage,
    inputTokens: totals.inputTokens,
    outputTokens: totals.outputTokens,
    characters: totals.characters,
    costUsd: totals.costUsd,
    unpricedCalls: totals.unpricedCalls,
  };
}

export function bucketPartsOf(call: ModelCallUsage, hourIndex: number): BucketParts {
  return {
    hour: hourText(hourIndex),
    spender: spenderText(call.spender),
    scope: call.scope,
    purpose: call.purpose,
    model: call.model,
  };
}

/**
 * The key of the bucket a call falls in: `2026-11-28T13|avatar:ada|discord:123|turn|openai:gpt-4o`
 * (hours sort first). Made without the parts: most calls add to a bucket already pending.
 */
export function bucketKeyOf(call: ModelCallUsage, hourIndex: number): string {
  const spender = call.spender.kind === 'avatar' ? `avatar:${escapePart(call.spender.id)}` : 'email';
  return `${hourText(hourIndex)}|${spender}|${escapePart(call.scope)}|${call.purpose}|${escapePart(call.model)}`;
}
