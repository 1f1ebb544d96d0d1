/** The parts of an initiative score, each from 0 to 1, kept so a decision can be explained. */
export interface InitiativeScore {
  score: number;
  attention: number;
  hunger: number;
  topic: number;
}

/** Lower-cased words of a text, for topic matching. */
export function wordsOf(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

/**
 * Initiative from recency (attention), hunger (time since the avatar last spoke, relative to the
 * active-speaker window) and topic (share of the avatar's topics present in the message).
 */
export function initiativeScore(input: {
  attention: number;
  lastSpokeAt: number | null;
  now: number;
  windowMs: number;
  topics: readonly string[] | undefined;
  words: ReadonlySet<string>;
}): InitiativeScore {
  const hunger =
    input.lastSpokeAt === null
      ? 1
      : Math.min(1, Math.max(0, input.now - input.lastSpokeAt) / Math.max(1, input.windowMs));
  let hits = 0;
  const topics = input.topics ?? [];
  for (const t of topics) if (input.words.has(t.toLowerCase())) hits++;
  const topic = topics.length === 0 ? 0 : Math.min(1, hits / Math.min(2, topics.length));
  const attention = Math.min(1, Math.max(0, input.attention));
  return { score: 0.4 * attention + 0.3 * hunger + 0.3 * topic, attention, hunger, topic };
}
