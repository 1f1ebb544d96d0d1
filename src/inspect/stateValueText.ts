import type { StateValue } from 'xstate';

/**
 * A state value on one line: `{ responding: 'reviewing' }` as `responding.reviewing`, and the
 * regions of a parallel state side by side (`present.mode.ambient | present.turn.ready`).
 */
export function stateValueText(value: StateValue): string {
  if (typeof value === 'string') return value;
  const parts: string[] = [];
  for (const [key, inner] of Object.entries(value)) {
    if (inner === undefined) continue;
    const text = stateValueText(inner);
    parts.push(...text.split(' | ').map((p) => `${key}.${p}`));
  }
  return parts.length > 0 ? parts.join(' | ') : '?';
}
