import { describe, expect, it } from 'vitest';
import { createScriptedModel, SCRIPTED_MODEL_ID } from '../../../src/adapters/llm/scriptedModel.js';
import { historyMessages } from '../../../src/delivery/historyMessages.js';
import {
  buildTurnPrompt,
  personaInstructions,
  presenceNote,
  threadNote,
  VOICE_NOTE,
} from '../../../src/delivery/prompts.js';
import { cleanReplyText } from '../../../src/delivery/replyText.js';
import { splitVoicePrefix } from '../../../src/delivery/voicePrefix.js';
import type { ChannelHistoryEntry } from '../../../src/ports/history.js';
import { luna, requestFor, rex, turnFor } from '../../support/llmFixtures.js';

let seq = 0;
/** A history entry; `at` defaults to the next second. */
function said(author: ChannelHistoryEntry['author'], text: string, at?: number): ChannelHistoryEntry {
  seq += 1;
  const when = at ?? seq * 1000;
  return { messageId: `m${when}`, at: when, author, text };
}
const ada = { kind: 'human', id: 'u-ada', name: 'Ada' } as const;
const lunaAuthor = { kind: 'avatar', id: luna.id, name: luna.name } as const;
const rexAuthor = { kind: 'avatar', id: rex.id, name: rex.name } as const;

describe('personaInstructions', () => {
  it('names the avatar, its persona, aliases and topics, and sets the rules', () => {
    const text = personaInstructions(luna);
    expect(text).toContain('You are Luna');
    expect(text).toContain('A dreamy astronomer who names comets after her friends.');
    expect(text).toContain('Moony');
    expect(text).toContain('stars and comets');
    expect(text).toMatch(/stay in character/i);
    expect(text).toMatch(/short/i);
    expect(text).toMatch(/never write lines for other participants/i);
  });

  it('leaves out what the profile does not have', () => {
    const text = personaInstructions({ id: 'x', name: 'Pip' });
    expect(text).not.toContain('persona:');
    expect(text).not.toContain('also call you');
    expect(text).not.toContain('care most about');
  });
});

describe('presenceNote', () => {
  it('lists who else is here, once each', () => {
    expect(presenceNote(['Rex', 'Ada', 'Rex'])).toMatch(/^Also in the channel: Rex and Ada\./);
    expect(presenceNote(['A', 'B', 'C'])).toContain('A, B and C');
  });

  it('says so when nobody is', () => {
    expect(presenceNote([])).toBe('Nobody else is in the channel right now.');
  });
});

describe('threadNote', () => {
  it('describes a greeting and its length limit', () => {
    const note = threadNote(turnFor(luna, { kind: 'greeting' }, { addressedByName: 'Ada', maxChars: 150 }));
    expect(note).toContain('summoned to the channel by Ada');
    expect(note).toContain('at most 150 characters');
  });

  it('asks an avatar summoned while already present to answer the call, not to greet as if arriving', () => {
    const note = threadNote(
      turnFor(luna, { kind: 'greeting' }, { addressedByName: 'Ada', maxChars: 150, alreadyPresent: true }),
    );
    expect(note).toContain('Ada just called for you, though you were already here');
    expect(note).not.toContain('just been summoned');
  });

  it('describes the second follow-up, to whoever reacted since the avatar arrived', () => {
    const note = threadNote(turnFor(luna, { kind: 'follow-up' }, { addressedByName: 'Bob' }));
    expect(note).toContain('Bob reacted to you since. Answer Bob once more');
  });

  it('describes the follow-up after arriving', () => {
    expect(threadNote(turnFor(luna, { kind: 'follow-up' }))).toMatch(/arrived a moment ago/);
  });

  it('describes the thread: partners and turn N of M', () => {
    const note = threadNote(
      turnFor(
        luna,
        {},
        { addressedByName: 'Rex', threadPartnerNames: ['Rex', 'Ada'], threadTurn: 3, threadMaxTurns: 6 },
      ),
    );
    expect(note).toContain('answer Rex');
    expect(note).toContain('conversation with Rex and Ada (this is turn 3 of 6)');
    expect(note).not.toMatch(/last turn/);
  });

  it('asks a closing turn to wrap up and allows a goodbye', () => {
    const note = threadNote(turnFor(luna, {}, { closing: true }));
    expect(note).toMatch(/last turn here: wrap up, and you may say goodbye/);
    expect(note).toMatch(/Do not ask a question/);
  });
});

describe('historyMessages', () => {
  it('maps own lines to assistant and others to named user lines, oldest first', () => {
    const history = [
      said(rexAuthor, 'Roar.', 3000),
      said(ada, 'Hi Luna!', 1000),
      said(lunaAuthor, 'Hello Ada.', 2000),
    ];
    expect(historyMessages(history, luna.id, 10)).toEqual([
      { role: 'user', name: 'Ada', content: 'Ada: Hi Luna!' },
      { role: 'assistant', content: 'Hello Ada.' },
      { role: 'user', name: 'Rex', content: 'Rex: Roar.' },
    ]);
  });

  it('keeps the newest messages up to the limit', () => {
    const history = Array.from({ length: 8 }, (_, i) => said(ada, `message ${i}`, i));
    const messages = historyMessages(history, luna.id, 3);
    expect(messages.map((m) => m.content)).toEqual(['Ada: message 5', 'Ada: message 6', 'Ada: message 7']);
  });

  it('drops the oldest messages to fit the character budget', () => {
    const history = [
      said(ada, 'a'.repeat(50), 1),
      said(ada, 'b'.repeat(50), 2),
      said(ada, 'c'.repeat(50), 3),
    ];
    const messages = historyMessages(history, luna.id, 10, 120);
    expect(messages.map((m) => m.content[5])).toEqual(['b', 'c']);
  });

  it('keeps the newest message, cut, when it alone is over budget', () => {
    const messages = historyMessages([said(ada, 'x'.repeat(500), 1)], luna.id, 10, 100);
    expect(messages).toHaveLength(1);
    expect(messages[0]?.content).toHaveLength(100);
    expect(messages[0]?.content.endsWith('…')).toBe(true);
  });

  it('skips blank messages and returns nothing for a zero limit', () => {
    expect(historyMessages([said(ada, '   ')], luna.id, 10)).toEqual([]);
    expect(historyMessages([said(ada, 'hi')], luna.id, 0)).toEqual([]);
  });
});

describe('buildTurnPrompt', () => {
  it('combines persona, presence, thread and history', () => {
    const turn = turnFor(
      luna,
      { triggerMessageId: 'm-last' },
      {
        addressedByName: 'Rex',
        presentNames: ['Rex'],
        threadPartnerNames: ['Rex'],
        threadTurn: 2,
        threadMaxTurns: 6,
      },
    );
    const history = [
      said(ada, 'Luna, meet Rex.', 1),
      { ...said(rexAuthor, 'Luna, seen any comets?', 2), messageId: 'm-last' },
    ];
    const prompt = buildTurnPrompt({ avatar: luna, turn, history });
    expect(prompt.system).toContain(personaInstructions(luna));
    expect(prompt.system).toContain(presenceNote(['Rex']));
    expect(prompt.system).toContain(threadNote(turn));
    expect(prompt.system).not.toContain(VOICE_NOTE);
    expect(prompt.messages).toEqual([
      { role: 'user', name: 'Ada', content: 'Ada: Luna, meet Rex.' },
      { role: 'user', name: 'Rex', content: 'Rex: Luna, seen any comets?' },
    ]);
  });

  it('adds the message being answered when history lacks it, and leaves out its own name', () => {
    const turn = turnFor(
      luna,
      {},
      { addressedByName: 'Ada', triggerText: 'What is up there?', presentNames: ['Luna', 'Rex'] },
    );
    const prompt = buildTurnPrompt({ avatar: luna, turn, history: [], voiceAvailable: true });
    expect(prompt.messages).toEqual([{ role: 'user', name: 'Ada', content: 'Ada: What is up there?' }]);
    expect(prompt.system).toContain('Also in the channel: Rex.');
    expect(prompt.system).toContain(VOICE_NOTE);
  });

  it('starts and ends with a user message', () => {
    const turn = turnFor(luna, { kind: 'follow-up' });
    const prompt = buildTurnPrompt({ avatar: luna, turn, history: [said(lunaAuthor, 'Hello, everyone!')] });
    expect(prompt.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(prompt.messages.at(-1)?.content).toBe('(It is your turn, Luna.)');
    expect(buildTurnPrompt({ avatar: luna, turn, history: [] }).messages).toHaveLength(1);
  });
});

describe('splitVoicePrefix', () => {
  it.each([
    ['[voice] Sing it', 'Sing it', true],
    ['  [VOICE]Sing it', 'Sing it', true],
    ['[ Voice ]\nSing it', 'Sing it', true],
    ['Sing it [voice]', 'Sing it [voice]', false],
    ['[voiced] no', '[voiced] no', false],
    ['plain', 'plain', false],
  ])('%j -> %j (voice %s)', (input, text, voiceRequested) => {
    expect(splitVoicePrefix(input)).toEqual({ text, voiceRequested });
  });
});

describe('cleanReplyText', () => {
  it('drops a label with the speaker’s own name, before or after the voice prefix', () => {
    expect(cleanReplyText('Luna: hi', ['Luna'])).toEqual({ text: 'hi', voiceRequested: false });
    expect(cleanReplyText('**Luna:** hi', ['Luna'])).toEqual({ text: 'hi', voiceRequested: false });
    expect(cleanReplyText('luna: [voice] hi', ['Luna'])).toEqual({ text: 'hi', voiceRequested: true });
    expect(cleanReplyText('Rex: hi', ['Luna'])).toEqual({ text: 'Rex: hi', voiceRequested: false });
  });
});

describe('scripted model', () => {
  it('is offline, deterministic and in character', async () => {
    const model = createScriptedModel();
    expect(model).toMatchObject({ id: SCRIPTED_MODEL_ID, offline: true });
    const request = requestFor(luna, {
      turn: turnFor(luna, {}, { addressedByName: 'Ada', addressedById: 'u-ada' }),
    });
    const first = await model.generateTurn(request);
    const second = await createScriptedModel().generateTurn(request);
    expect(second).toEqual(first);
    expect(first.model).toBe(SCRIPTED_MODEL_ID);
    expect(first.text).toMatch(/^Ada, /);
    expect(first.text).not.toContain('Luna');
  });

  it('mentions an avatar that addressed it, using situation.avatarIds', async () => {
    const turn = turnFor(luna, {}, { addressedByName: 'Rex', addressedById: rex.id });
    const result = await createScriptedModel().generateTurn(requestFor(luna, { turn }));
    expect(result.mentions).toEqual([rex.id]);
    const asHuman = await createScriptedModel().generateTurn(
      requestFor(luna, { turn, situation: { ...requestFor().situation, avatarIds: [luna.id] } }),
    );
    expect(asHuman.mentions).toEqual([]);
  });

  it('keeps greetings within maxChars', async () => {
    const model = createScriptedModel();
    for (let i = 0; i < 20; i += 1) {
      const turn = turnFor(luna, { kind: 'greeting', turnId: `c1:t${i}` }, { maxChars: 30 });
      const { text } = await model.generateTurn(requestFor(luna, { turn }));
      expect(text.length).toBeLessThanOrEqual(30);
    }
  });
});
