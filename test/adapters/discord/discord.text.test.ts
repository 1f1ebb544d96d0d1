import { describe, expect, it } from 'vitest';
import { QUOTE_RESERVE, replyQuote } from '../../../src/adapters/discord/replyQuote.js';
import { webhookUsername } from '../../../src/adapters/discord/webhookUsername.js';

describe('webhook usernames', () => {
  it('keep a name Discord accepts as it is', () => {
    expect(webhookUsername('Nova 🌟', 'nova')).toBe('Nova 🌟');
  });

  it('never contain "discord" or "clyde" in any case, and still read the same', () => {
    for (const name of ['Discordia', 'Mr CLYDE', 'clydesdale of discord']) {
      const safe = webhookUsername(name, 'x');
      expect(safe).not.toMatch(/discord|clyde/iu);
      expect(safe.length).toBe(name.length);
    }
  });

  it('are at most 80 characters, cut between graphemes, and fall back to the id when nothing usable is left', () => {
    const long = '👩‍👩‍👧‍👦'.repeat(20);
    const safe = webhookUsername(long, 'fam');
    expect(safe.length).toBeLessThanOrEqual(80);
    expect(long.startsWith(safe)).toBe(true);
    expect(webhookUsername('   ', 'rex')).toBe('rex');
    expect(webhookUsername('everyone', 'rex')).toBe('rex');
  });
});

describe('the quote line an answer starts with', () => {
  const target = { guildId: '1', channelId: '2', messageId: '3', authorId: '4' };

  it('names the person, quotes the start of their message and links to it', () => {
    expect(replyQuote({ ...target, text: 'What are   comets\nmade of?' })).toBe(
      '> ↪ <@4>: What are comets made of? [↗](https://discord.com/channels/1/2/3)',
    );
  });

  it('makes markdown and mentions in the quoted text inert', () => {
    const line = replyQuote({ ...target, text: '**bold** @everyone <@&5> [x](http://evil)' });
    expect(line).toContain('\\*\\*bold\\*\\*');
    expect(line).not.toMatch(/@everyone|<@&5>/u);
    expect(line).toContain('\\[x\\]\\(http://evil\\)');
  });

  it('stays within its reserve whatever the text, clipping whole graphemes with an ellipsis', () => {
    for (const text of [
      'a'.repeat(5000),
      '*'.repeat(5000),
      '👩‍👩‍👧‍👦'.repeat(500),
      '<@&123456789012345678>'.repeat(100),
    ]) {
      const line = replyQuote({
        ...target,
        guildId: '12345678901234567890',
        channelId: '12345678901234567890',
        messageId: '12345678901234567890',
        authorId: '12345678901234567890',
        text,
      });
      expect(line.length).toBeLessThanOrEqual(QUOTE_RESERVE);
      expect(line).toContain('…');
      expect(line).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/u);
    }
  });

  it('without the message (deleted, unreadable) links to it without quoting', () => {
    expect(replyQuote({ channelId: '2', messageId: '3' })).toBe(
      '> ↪ a message [↗](https://discord.com/channels/@me/2/3)',
    );
  });
});
