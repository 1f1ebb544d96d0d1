import { z } from 'zod';
import type { MemoryRecord, VersionedMemory } from '../ports/store.js';

/**
 * Where refused updates of a profile are kept: beside its versions, in the same namespace under
 * this key, one version per refusal (what was refused and why; never the refused text itself).
 */
export const REFUSALS_KEY = 'refused_updates';

/** One refused update. */
export const memoryRefusalSchema = z.object({
  /** Why, in words: `moved 3 lines from Ignore to Respond`. */
  reason: z.string().max(500),
  /** The version that stays (the one the refused update started from). */
  kept: z.number().int().nonnegative(),
  /** What the update came from (e.g. `inbox e1#2`), when known. */
  origin: z.string().max(200).optional(),
  /** `update`: learning from an answer; `compaction`: making room under the size limit. */
  kind: z.enum(['update', 'compaction']),
});

/** See {@link memoryRefusalSchema}. */
export type MemoryRefusal = z.infer<typeof memoryRefusalSchema>;

/** Writes a refusal beside the profile of `namespace` (a new version of {@link REFUSALS_KEY}). */
export async function recordRefusal(
  memory: VersionedMemory,
  namespace: string,
  refusal: MemoryRefusal,
  at: number,
): Promise<void> {
  await memory.put(namespace, REFUSALS_KEY, memoryRefusalSchema.parse(refusal), {
    at,
    // The reason is in the value: the source stays short (one is kept per refusal).
    source: `refused ${refusal.kind}`,
  });
}

/** The refusals kept for `namespace`, newest first (what does not parse is left out). */
export async function readRefusals(
  memory: VersionedMemory,
  namespace: string,
  limit = 1_000,
): Promise<(MemoryRecord<MemoryRefusal> & { value: MemoryRefusal })[]> {
  const records = await memory.history(namespace, REFUSALS_KEY, limit);
  const out: (MemoryRecord<MemoryRefusal> & { value: MemoryRefusal })[] = [];
  for (const record of records) {
    const parsed = memoryRefusalSchema.safeParse(record.value);
    if (parsed.success) out.push({ ...record, value: parsed.data });
  }
  return out;
}
