import { describe, expect, it } from 'vitest';
import { replySettingsFromEnv } from '../../src/config/replySettings.js';
import { clipReply } from '../../src/delivery/clipReply.js';

describe('clipReply', () => {
  it('leaves a reply within the cap alone', () => {
    expect(clipReply('Short. Reply.', 200)).toBe('Short. Reply.');
  });

  it('cuts at the last sentence end within the cap', () => {
    const text = `${'One sentence here. '.repeat(30)}And a sentence that runs past the cap`;
    const clipped = clipReply(text, 200);
    expect(clipped.length).toBeLessThanOrEqual(200);
    expect(clipped).toMatch(/here\.$/);
  });

  it('does not take a dot inside a word for a sentence end', () => {
    const text = `Visit example.com for more ${'words '.repeat(60)}`;
    const clipped = clipReply(text, 200);
    expect(clipped.length).toBeLessThanOrEqual(200);
    expect(clipped.endsWith('…')).toBe(true);
  });

  it('falls back to a word boundary with an ellipsis when no sentence ends late enough', () => {
    const clipped = clipReply('word '.repeat(100), 200);
    expect(clipped.length).toBeLessThanOrEqual(200);
    expect(clipped.endsWith('word…')).toBe(true);
  });
});

describe('TROUPE_MAX_REPLY_CHARS', () => {
  it('defaults to 4,000 and takes a whole number in range', () => {
    expect(replySettingsFromEnv({})).toEqual({ maxReplyChars: 4000 });
    expect(replySettingsFromEnv({ TROUPE_MAX_REPLY_CHARS: '1500' })).toEqual({ maxReplyChars: 1500 });
  });

  it('refuses values out of range or not numbers, naming the variable and the range', () => {
    for (const value of ['10', '1e9', 'lots', '12.5', '-3']) {
      expect(() => replySettingsFromEnv({ TROUPE_MAX_REPLY_CHARS: value })).toThrow(
        expect.objectContaining({
          code: 'TROUPE_CONFIG_INVALID',
          message: expect.stringMatching(/TROUPE_MAX_REPLY_CHARS[\s\S]*200 to 100000/),
        }),
      );
    }
  });
});
