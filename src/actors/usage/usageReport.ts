import type { UsageGrouping, UsageRow } from '../../ports/usage.js';
import { avatarOf, type UsageBucketValue } from './usageBucket.js';
import { addTotals, emptyTotals } from './usageTotals.js';

/** The group a bucket falls in: an avatar id (or `email`), its scope, purpose or model. */
function groupKey(bucket: UsageBucketValue, by: UsageGrouping): string {
  switch (by) {
    case 'avatar':
      return avatarOf(bucket.spender) ?? 'email';
    case 'channel':
      return bucket.scope;
    case 'purpose':
      return bucket.purpose;
    case 'model':
      return bucket.model;
  }
}

/** Buckets summed per group, the costliest first (then the busiest, then by key). */
export function groupUsage(buckets: readonly UsageBucketValue[], by: UsageGrouping): UsageRow[] {
  const rows = new Map<string, UsageRow>();
  for (const bucket of buckets) {
    const key = groupKey(bucket, by);
    let row = rows.get(key);
    if (!row) {
      row = { key, ...emptyTotals() };
      rows.set(key, row);
    }
    addTotals(row, bucket);
  }
  return [...rows.values()].sort(
    (a, b) => b.costUsd - a.costUsd || b.calls - a.calls || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
  );
}
