import { describe, expect, it } from 'vitest';
import { stateValueText } from '../../src/inspect/stateValueText.js';

describe('stateValueText', () => {
  it('writes a nested state as a dotted path and parallel regions side by side', () => {
    expect(stateValueText('done')).toBe('done');
    expect(stateValueText({ responding: 'reviewing' })).toBe('responding.reviewing');
    expect(stateValueText({ present: { mode: 'conversing', turn: 'ready' } })).toBe(
      'present.mode.conversing | present.turn.ready',
    );
  });
});
