import { z } from 'zod';
import { TroupeError } from '../ports/troupeError.js';

/** Which shards `troupe discord` runs here: Discord's recommendation, or ids out of a total. */
export type DiscordShardPlan =
  | { kind: 'auto' }
  /** `ids` (ascending, distinct, each below `total`) out of `total` shards across every host. */
  | { kind: 'list'; ids: readonly number[]; total: number };

/** Discord's own limit is far lower; this keeps a typo from spawning thousands of processes. */
const MAX_SHARDS = 10_000;

const wholeNumber = z
  .string()
  .trim()
  .regex(/^\d{1,5}$/u, 'is not a whole number')
  .transform(Number);

const shardFlags = z.object({
  shards: z.string().trim().min(1, 'is empty'),
  shardCount: z.string().optional(),
});

function invalid(message: string): TroupeError {
  return new TroupeError('TROUPE_DISCORD_SHARDS_INVALID', message);
}

/**
 * Reads `--shards` and `--shard-count`. `--shards auto` asks Discord how many to run, all here;
 * `--shards N` alone runs all N here; `--shards 0,1 --shard-count 4` runs shards 0 and 1 of 4, so
 * several hosts with disjoint lists serve one bot. Throws `TROUPE_DISCORD_SHARDS_INVALID` naming
 * what to change.
 */
export function readDiscordShardPlan(flags: {
  shards: string;
  shardCount?: string | undefined;
}): DiscordShardPlan {
  const parsed = shardFlags.safeParse(flags);
  if (!parsed.success)
    throw invalid(
      '--shards is missing or empty: give "auto", a count, or the shard ids this host runs (with --shard-count).',
    );
  const { shards, shardCount } = parsed.data;
  if (shards === 'auto') {
    if (shardCount !== undefined)
      throw invalid(
        '--shard-count goes with a list of shard ids (--shards 0,1 --shard-count 4), not with --shards auto.',
      );
    return { kind: 'auto' };
  }
  if (shardCount === undefined) {
    const count = wholeNumber.safeParse(shards);
    if (count.success && count.data >= 1 && count.data <= MAX_SHARDS)
      return { kind: 'list', ids: [...Array(count.data).keys()], total: count.data };
    throw invalid(
      shards.includes(',')
        ? `--shards ${JSON.stringify(shards)} lists shard ids: say how many shards all hosts run together with --shard-count.`
        : `--shards ${JSON.stringify(shards)} is not "auto", a count from 1, or shard ids with --shard-count.`,
    );
  }
  const total = wholeNumber.safeParse(shardCount);
  if (!total.success || total.data < 1 || total.data > MAX_SHARDS)
    throw invalid(
      `--shard-count ${JSON.stringify(shardCount)} is not a whole number from 1 to ${MAX_SHARDS}.`,
    );
  const ids: number[] = [];
  for (const part of shards.split(',')) {
    const id = wholeNumber.safeParse(part);
    if (!id.success)
      throw invalid(
        `--shards ${JSON.stringify(shards)}: ${JSON.stringify(part.trim())} is not a shard id (0, 1, 2, ...).`,
      );
    if (id.data >= total.data)
      throw invalid(
        `--shards ${JSON.stringify(shards)}: shard ${id.data} does not exist among ${total.data} (ids run from 0 to ${total.data - 1}).`,
      );
    if (ids.includes(id.data))
      throw invalid(`--shards ${JSON.stringify(shards)} names shard ${id.data} twice.`);
    ids.push(id.data);
  }
  return { kind: 'list', ids: ids.sort((a, b) => a - b), total: total.data };
}
