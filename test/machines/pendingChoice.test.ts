import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { pendingChoiceMachine } from '../../src/machines/pendingChoice.machine.js';
import { resolveChoiceReply } from '../../src/textRules/choiceReply.js';

const choices = [
  { id: 42, label: 'Parts for Truck Inc' },
  { id: 77, label: 'Parts 4 Trucks Incorporated' },
  { id: 91, label: "O'Brien Hydraulics" },
];

describe('reading a reply as a choice', () => {
  it.each([
    ['2', 77],
    ['#2', 77],
    ['option 3', 91],
    ['2 please', 77],
    ['the second one', 77],
    ['Second', 77],
    ['the 3rd', 91],
    ['first', 42],
    ['the last one', 91],
    ['parts 4 trucks incorporated', 77],
    ['“Parts for Truck Inc.”', 42],
    ['obrien hydraulics', undefined],
    ["o'brien hydraulics", 91],
    ['4', undefined],
    ['0', undefined],
    ['what about PO-1001?', undefined],
    ['2 trucks please, and a coffee', undefined],
    ['', undefined],
  ])('%j picks %j', (reply, id) => {
    expect(resolveChoiceReply(reply, choices)?.id).toBe(id);
  });
});

describe('the pending choice machine', () => {
  const start = () =>
    createActor(pendingChoiceMachine, {
      input: { channelId: 'c', userId: 'u', entityType: 'vendor', choices, at: 1000, ttlMs: 60_000 },
    }).start();

  it('resolves on a pick', () => {
    const actor = start();
    actor.send({ type: 'choice.reply', at: 2000, text: 'the second one' });
    expect(actor.getSnapshot().value).toBe('resolved');
    expect(actor.getSnapshot().context.picked).toEqual({ id: 77, label: 'Parts 4 Trucks Incorporated' });
  });

  it('clears on anything else', () => {
    const actor = start();
    actor.send({ type: 'choice.reply', at: 2000, text: 'never mind, what is the status of PO-1001?' });
    expect(actor.getSnapshot().value).toBe('cleared');
    expect(actor.getSnapshot().context.picked).toBeNull();
  });

  it('expires at its deadline, even if the pick arrives later', () => {
    const late = start();
    late.send({ type: 'choice.reply', at: 61_000, text: '2' });
    expect(late.getSnapshot().value).toBe('expired');
    const ticked = start();
    ticked.send({ type: 'choice.tick', at: 60_999 });
    expect(ticked.getSnapshot().value).toBe('awaiting');
    ticked.send({ type: 'choice.tick', at: 61_000 });
    expect(ticked.getSnapshot().value).toBe('expired');
  });
});
