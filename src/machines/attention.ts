/**
 * Attention that decays with the time since its last update: `value * 2^(-elapsed / halfLife)`.
 * Stored as the value at a moment, so reading never compounds the decay (the specified bug).
 */
export interface Attention {
  value: number;
  at: number;
}

/** Attention as it stands at `now`. */
export function attentionAt(attention: Attention, now: number, halfLifeMs: number): number {
  const elapsed = Math.max(0, now - attention.at);
  if (halfLifeMs <= 0) return elapsed === 0 ? attention.value : 0;
  return attention.value * 2 ** (-elapsed / halfLifeMs);
}

/** Attention after a boost at `now`: the decayed value plus `boost`, capped at 1. */
export function boostAttention(
  attention: Attention,
  now: number,
  halfLifeMs: number,
  boost: number,
): Attention {
  return { value: Math.min(1, attentionAt(attention, now, halfLifeMs) + boost), at: now };
}
