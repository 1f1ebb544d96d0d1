/** The rungs of the response ladder plus the two scheduled summon turns. */
export type Rung =
  | 'reply'
  | 'thread'
  | 'summon'
  | 'affinity'
  | 'mention'
  | 'round-robin'
  | 'initiative'
  | 'greeting'
  | 'follow-up';

/** Where the thread rung sits (THREAD_RESPONSE_PRIORITY). */
export type ThreadPriority = 'high' | 'normal' | 'low';

/**
 * The response ladder, highest first: reply, thread, summon, affinity, mention,
 * round-robin, initiative. THREAD_RESPONSE_PRIORITY moves the thread rung: `high` right after
 * replies, `normal` after mentions, `low` after round-robin.
 */
export function rungOrder(threadPriority: ThreadPriority): readonly Rung[] {
  const base: Rung[] = ['reply', 'summon', 'affinity', 'mention', 'round-robin', 'initiative'];
  const after = threadPriority === 'high' ? 'reply' : threadPriority === 'normal' ? 'mention' : 'round-robin';
  base.splice(base.indexOf(after) + 1, 0, 'thread');
  return ['greeting', 'follow-up', ...base];
}

const ranksByPriority = new Map<ThreadPriority, ReadonlyMap<Rung, number>>();

/** Rank of each rung (lower is higher priority) for a given thread priority; one shared map each. */
export function rungRanks(threadPriority: ThreadPriority): ReadonlyMap<Rung, number> {
  // Every floor asks for its ranks when it is built or restored: three priorities, three maps.
  let ranks = ranksByPriority.get(threadPriority);
  if (!ranks) {
    ranks = new Map(rungOrder(threadPriority).map((r, i) => [r, i]));
    ranksByPriority.set(threadPriority, ranks);
  }
  return ranks;
}
