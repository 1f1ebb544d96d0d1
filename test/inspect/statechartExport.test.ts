import { describe, expect, it } from 'vitest';
import { troupeMachines } from '../../src/cli/charts.js';
import { renderStatechart } from '../../src/inspect/renderStatechart.js';
import { chartStates, exportStatechart } from '../../src/inspect/statechartModel.js';
import { orderMachine } from '../fixtures/charts/userMachines.mjs';
import {
  edgeKeys,
  expectDotShows,
  expectedFromConfig,
  expectedFromJson,
  expectMermaidShows,
  expectScxmlShows,
  expectSvgShows,
  parseXml,
} from '../support/chartExpectations.js';

const machines = [...troupeMachines, orderMachine];

describe('statechart export: every state and every transition, in every format', () => {
  it('exports all five of Troupe’s machines', () => {
    expect(troupeMachines.map((m) => m.id).sort()).toEqual([
      'avatarPresence',
      'conversationThread',
      'createRecord',
      'emailLifecycle',
      'pendingChoice',
    ]);
  });

  for (const machine of machines) {
    const chart = exportStatechart(machine);
    const fromConfig = expectedFromConfig(machine);
    const fromJson = expectedFromJson(chart);

    describe(machine.id, () => {
      it('json: the states and transitions are exactly those of the definition', () => {
        expect([...fromJson.states].sort()).toEqual([...fromConfig.states].sort());
        expect(edgeKeys(fromJson.edges)).toEqual(edgeKeys(fromConfig.edges));
        expect(chart).toMatchObject({ format: 'troupe-statechart', version: 1, id: machine.id });
      });

      // Both expectations are checked: the config's (independent of the export) and the JSON's.
      for (const expected of [fromConfig, fromJson]) {
        const source = expected === fromConfig ? 'the definition' : 'the json';
        it(`mermaid shows every state and transition of ${source}`, async () => {
          expectMermaidShows(await renderStatechart(chart, 'mermaid'), expected, machine.id);
        });
        it(`dot shows every state and transition of ${source}`, async () => {
          expectDotShows(await renderStatechart(chart, 'dot'), expected);
        });
        it(`scxml is well-formed W3C SCXML with every state and transition of ${source}`, async () => {
          expectScxmlShows(await renderStatechart(chart, 'scxml'), expected);
        });
        it(`svg has one node per state and every transition of ${source}`, async () => {
          expectSvgShows(await renderStatechart(chart, 'svg'), expected);
        });
      }
    });
  }
});

describe("a user's machine: nested, parallel, guards, delays, invoke, entry/exit, descriptions", () => {
  const chart = exportStatechart(orderMachine);
  const state = (id: string) => {
    const found = chartStates(chart).find((s) => s.id === id);
    if (!found) throw new Error(`no state ${id}`);
    return found;
  };
  const transition = (source: string, label: string) =>
    chart.transitions.find((t) => t.source === source && t.label === label);

  it('reads state types, initial states, descriptions, entry/exit actions and invokes', () => {
    expect(state('order')).toMatchObject({
      type: 'compound',
      initial: 'order.loading',
      description: 'One order, from loading its customer to shipped.',
    });
    expect(state('order.loading')).toMatchObject({
      description: 'Fetches the customer before anything else.',
      invoke: [{ id: 'customer', src: 'fetchCustomer' }],
    });
    // The inline exit function is an unnamed "action"; xstate's own raise/cancel for delays are not listed.
    expect(state('order.active')).toMatchObject({
      type: 'parallel',
      entry: ['logEntry'],
      exit: ['logExit', 'action'],
    });
    expect(state('order.active.payment.unpaid')).toMatchObject({ entry: [], exit: [] });
    expect(state('order.active.payment.paid').type).toBe('final');
    expect(state('order.active.shipping.shipped')).toMatchObject({
      type: 'final',
      description: 'Handed to the carrier.',
    });
  });

  it('reads guards (named, or "guard" when inline), delays (named numbers resolved), always, targetless and invoke events', () => {
    expect(transition('order.active.payment.unpaid', 'PAY [isPaid] / notifyCustomer')).toMatchObject({
      kind: 'event',
      event: 'PAY',
      guard: 'isPaid',
      actions: ['notifyCustomer'],
      targets: ['order.active.payment.paid'],
    });
    expect(transition('order.active.payment.unpaid', 'PAY [guard]')).toMatchObject({ guard: 'guard' });
    expect(transition('order.active.payment.unpaid', 'after 45s')).toMatchObject({
      kind: 'after',
      delay: { ms: 45_000, name: 'paymentTimeout' },
      targets: ['order.active.payment.expired'],
    });
    expect(transition('order.active.payment.expired', 'after 1500ms [isPaid]')).toMatchObject({
      delay: { ms: 1500, name: null },
    });
    // A delay implemented by a function has no fixed length: its name is printed.
    expect(transition('order.active.payment.expired', 'after retryBackoff')).toMatchObject({
      delay: { ms: null, name: 'retryBackoff' },
    });
    expect(transition('order.active.shipping.packing', 'always [hasItems]')).toMatchObject({
      kind: 'always',
      event: null,
    });
    expect(transition('order.active', 'NOTE / assign')).toMatchObject({ targets: [] });
    expect(transition('order.loading', 'xstate.done.actor.customer')).toMatchObject({
      targets: ['order.active'],
    });
    expect(transition('order.loading', 'xstate.error.actor.customer')).toMatchObject({
      targets: ['order.broken'],
    });
  });

  it('every format carries the same details: descriptions, actions, invokes, delays', async () => {
    const mermaid = await renderStatechart(chart, 'mermaid');
    const dot = await renderStatechart(chart, 'dot');
    const scxml = await renderStatechart(chart, 'scxml');
    for (const text of [mermaid, dot]) {
      for (const detail of [
        'Fetches the customer before anything else.',
        'entry / logEntry',
        'exit / logExit, action',
        'invoke fetchCustomer',
        'after 45s',
        'PAY [isPaid] / notifyCustomer',
        'Handed to the carrier.',
      ])
        expect(text).toContain(detail);
    }
    const doc = parseXml(scxml);
    const parallel = doc.getElementsByTagName('parallel')[0];
    expect(parallel?.getAttribute('id')).toBe('order.active');
    expect(scxml).toContain('<send id="xstate.after.paymentTimeout.order.active.payment.unpaid"');
    expect(scxml).toContain('delay="45s"/>');
    expect(scxml).toContain('<invoke id="customer" src="fetchCustomer"/>');
    expect(scxml).toContain('<transition event="PAY" cond="isPaid" target="order.active.payment.paid">');
    expect(scxml).toContain('<troupe:action name="logEntry"/>');
    expect(scxml).toContain('<troupe:description>Handed to the carrier.</troupe:description>');
  });
});
