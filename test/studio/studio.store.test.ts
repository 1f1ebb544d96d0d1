import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../src/actors/clock.js';
import type { InspectionEvent } from '../../src/actors/inspectionEvent.js';
import { memoryNamespaces, PREFERENCES_KEY } from '../../src/email/triagePreferences.js';
import type { FloorEffect } from '../../src/floor/floorTypes.js';
import { chartStates, exportStatechart } from '../../src/inspect/statechartModel.js';
import { avatarPresenceMachine } from '../../src/machines/avatarPresence.machine.js';
import { type OpenedStudio, openStudio } from '../../src/studio/openStudio.js';
import { STUDIO_LIMITS, type StudioActor } from '../../src/studio/studioState.js';
import { createStudioStore } from '../../src/studio/studioStore.js';

const opened: OpenedStudio[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

async function studio(config?: Record<string, string>): Promise<OpenedStudio> {
  const s = await openStudio({ clock: new SimulatedClock(), port: 0, ...(config ? { config } : {}) });
  opened.push(s);
  await s.advance(0);
  return s;
}

const state = (s: OpenedStudio) => s.studioStore.getSnapshot().context;
const actor = (s: OpenedStudio, id: string): StudioActor | undefined =>
  state(s).actors.find((a) => a.id === id);
const key = 'terminal:observatory';

async function summonRex(s: OpenedStudio): Promise<void> {
  s.runtime.send({
    type: 'avatar.summon',
    channel: { kind: 'terminal', id: 'observatory' },
    avatarId: 'rex',
    by: { id: 'u', name: 'Sam' },
  });
  await s.advance(0);
}

describe('the studio store: one projection of the runtime', () => {
  it('shows the residents from the start, and a summoned avatar as a presence actor with its machine state ids', async () => {
    const s = await studio();
    expect(actor(s, `presence:${key}:luna`)).toMatchObject({ status: 'active', machine: 'avatarPresence' });
    expect(actor(s, `presence:${key}:rex`)).toBeUndefined();
    expect(state(s).playground.avatars.map((a) => [a.id, a.present])).toEqual([
      ['luna', true],
      ['pip', true],
      ['rex', false],
    ]);

    await summonRex(s);
    const rex = actor(s, `presence:${key}:rex`);
    expect(rex).toMatchObject({
      kind: 'presence',
      status: 'active',
      value: { present: { mode: 'conversing' } },
    });
    // The same ids as the chart's states (the SVG's `state:<id>` elements).
    const chartIds = chartStates(exportStatechart(avatarPresenceMachine)).map((c) => c.id);
    expect(rex?.stateIds).toContain('avatarPresence.present.mode.conversing');
    for (const id of rex?.stateIds ?? []) expect(chartIds).toContain(id);
    expect(state(s).playground.avatars.find((a) => a.id === 'rex')?.present).toBe(true);
    // Rex greets; the playground shows it with the floor's reason.
    const greeting = state(s).playground.messages.find((m) => m.author.id === 'rex');
    expect(greeting?.why).toMatch(/summoned/u);
    expect(state(s).counters.summoned).toBe(1);
  });

  it('a thread opens, and when the clock reaches its deadline the projection shows it ended (done) with its final state', async () => {
    // Quiet threads conclude after 45 s by default; with that long, the thread runs to its deadline.
    const s = await studio({ threadQuietMs: '1h', threadTtlMs: '3m' });
    await summonRex(s);
    const thread = state(s).actors.find((a) => a.kind === 'thread');
    expect(thread).toMatchObject({
      status: 'active',
      value: 'active',
      stateIds: ['conversationThread.active'],
    });
    const ended: InspectionEvent[] = [];
    const sub = s.runtime.inspection$.subscribe((e) => {
      if (e.type === 'floor.effect' && e.effect.type === 'thread.ended') ended.push(e);
    });
    await s.advance(60_000);
    const running = actor(s, thread?.id ?? '');
    expect(running?.status).toBe('active');
    const deadline = running?.context.expiresAt as number;
    expect(deadline).toBeGreaterThan(s.clock.now());
    // Time moves past the deadline; the floor's wakeup ends the thread.
    await s.advance(10 * 60_000);
    sub.unsubscribe();
    expect(ended).toHaveLength(1);
    const outcome = (ended[0] as Extract<InspectionEvent, { type: 'floor.effect' }>).effect;
    if (outcome.type !== 'thread.ended') throw new Error('not a thread end');
    const done = actor(s, thread?.id ?? '');
    // Ended by the wakeup at its deadline (nobody was waiting for an answer then: `concluded`).
    expect(outcome.at).toBe(deadline);
    expect(['expired', 'concluded']).toContain(outcome.outcome);
    expect(done).toMatchObject({
      status: 'done',
      value: outcome.outcome,
      stateIds: [`conversationThread.${outcome.outcome}`],
    });
    expect(done?.context).toMatchObject({ outcome: outcome.outcome, turnCount: outcome.turns });
    expect(state(s).counters.threadsOpened).toBe(1);
    expect(state(s).now).toBeGreaterThanOrEqual(outcome.at);
  });

  it('lists the email notify interrupt with exactly what it allows, and a draft with its schema fields', async () => {
    const s = await studio();
    const { interrupts } = state(s);
    const notify = interrupts.find((i) => i.action === 'Email Assistant: notify');
    expect(notify).toMatchObject({
      allow: { ignore: true, respond: true, edit: false, accept: false },
      fields: [],
    });
    expect(notify?.description).toContain('#');
    const draft = interrupts.find((i) => i.action === 'send_email_tool');
    expect(draft?.allow).toEqual({ ignore: true, respond: true, edit: true, accept: true });
    expect(draft?.fields.map((f) => [f.name, f.type, f.required])).toEqual([
      ['to', 'string', true],
      ['subject', 'string', true],
      ['content', 'text', true],
    ]);
    for (const f of draft?.fields ?? []) expect(f.value).toEqual(draft?.args[f.name]);
    // Oldest first, as many as the assistant holds.
    expect(interrupts.map((i) => i.id)).toEqual((await s.assistant.pending()).map((p) => p.id));
    expect(state(s).counters).toMatchObject({ emailsReceived: 8 });
  });

  it('an answer moves the interrupt to the answered list with the memory version it produced, and the email on', async () => {
    const s = await studio();
    const notify = state(s).interrupts.find((i) => i.action === 'Email Assistant: notify');
    if (!notify) throw new Error('no notify interrupt');
    await s.assistant.answer(notify.id, { type: 'response', args: 'Great news! When can we see a demo?' });
    const memory = await s.runtime.store.memory.get(memoryNamespaces.triage, PREFERENCES_KEY);
    expect(memory?.version).toBeGreaterThanOrEqual(1);
    const after = state(s);
    expect(after.interrupts.map((i) => i.id)).not.toContain(notify.id);
    expect(after.answered[0]).toMatchObject({
      interruptId: notify.id,
      emailId: notify.emailId,
      type: 'response',
      memory: { namespace: memoryNamespaces.triage, version: memory?.version },
    });
    const email = actor(s, `email:${notify.emailId}`);
    expect(email?.value).not.toBe('notifying');
    expect(after.answered[0]?.emailState).toEqual(email?.value);
    expect(after.counters.interruptsAnswered).toBe(1);
  });
});

describe('the studio store: telemetry', () => {
  it('counts the composed-response modes the lookups wrote to agent_event_logs, read through the store port', async () => {
    const s = await studio();
    expect(state(s).telemetry).toEqual({ modes: {}, total: 0, recent: [] });
    const ask = (text: string, id: string) =>
      s.runtime.send({
        type: 'channel.message',
        channel: { kind: 'terminal', id: 'observatory' },
        messageId: id,
        author: { kind: 'human', id: 'u', name: 'Sam' },
        text,
      });
    ask("Luna, what's the status of PO-1001?", 'h1');
    await s.advance(0);
    await s.advance(60_000);
    ask('Luna, find vendor Zzyzx Nonexistent', 'h2');
    await s.advance(0);
    // What the store holds is what the studio shows.
    const logged = await s.runtime.store.events.read('agent_event_logs');
    expect(logged.length).toBeGreaterThanOrEqual(2);
    const modes: Record<string, number> = {};
    for (const e of logged)
      modes[String(e.data.response_mode)] = (modes[String(e.data.response_mode)] ?? 0) + 1;
    const { telemetry } = state(s);
    expect(telemetry.total).toBe(logged.length);
    expect(telemetry.modes).toEqual(modes);
    expect(telemetry.modes.success).toBeGreaterThanOrEqual(1);
    expect(telemetry.recent.at(-1)?.mode).toBe(String(logged.at(-1)?.data.response_mode));
  });

  it('shows each avatar’s usage of the day with its caps, and a cap the floor reported reached', async () => {
    const s = await studio({ avatarMaxTokensPerDay: '1000', maxTokensPerDay: '1000000' });
    const now = state(s).now;
    expect(state(s).usage.avatars.map((a) => [a.id, a.totals.calls, a.caps])).toEqual([
      ['luna', 0, [{ scope: 'avatar', avatar: 'luna', measure: 'tokens', limit: 1000, used: 0 }]],
      ['pip', 0, [{ scope: 'avatar', avatar: 'pip', measure: 'tokens', limit: 1000, used: 0 }]],
      ['rex', 0, [{ scope: 'avatar', avatar: 'rex', measure: 'tokens', limit: 1000, used: 0 }]],
    ]);
    s.runtime.usage?.record({
      at: now,
      model: 'test:priced',
      spender: { kind: 'avatar', id: 'luna' },
      scope: key,
      purpose: 'turn',
      inputTokens: 1_500,
      outputTokens: 500,
      characters: 30,
    });
    s.runtime.send({
      type: 'channel.message',
      channel: { kind: 'terminal', id: 'observatory' },
      messageId: 'h1',
      author: { kind: 'human', id: 'u', name: 'Sam' },
      text: 'Luna, how bright is Vega tonight?',
    });
    await s.advance(0);
    const { usage } = state(s);
    const luna = usage.avatars.find((a) => a.id === 'luna');
    expect(luna?.totals).toMatchObject({ calls: 1, inputTokens: 1_500, outputTokens: 500 });
    expect(luna?.caps).toEqual([
      { scope: 'avatar', avatar: 'luna', measure: 'tokens', limit: 1000, used: 2000 },
    ]);
    expect(luna?.capped).toMatchObject({
      reason: 'cap-avatar-tokens',
      detail: '2,000 of 1,000 tokens today',
    });
    expect(usage.total).toMatchObject({ inputTokens: 1_500, outputTokens: 500 });
    expect(usage.totalCaps).toEqual([{ scope: 'total', measure: 'tokens', limit: 1_000_000, used: 2000 }]);
    // The floor left Luna's turn out for the cap and told the person: the studio lists both.
    const reached = {
      avatarId: 'luna',
      channelKey: key,
      reason: 'cap-avatar-tokens',
      detail: '2,000 of 1,000 tokens today',
    };
    expect(usage.capsReached).toEqual([
      expect.objectContaining({ ...reached, notice: false }),
      expect.objectContaining({ ...reached, notice: true }),
    ]);
    // Once more: the same entries, with the later time.
    await s.advance(60_000);
    s.runtime.send({
      type: 'channel.message',
      channel: { kind: 'terminal', id: 'observatory' },
      messageId: 'h2',
      author: { kind: 'human', id: 'u', name: 'Sam' },
      text: 'Luna, and Altair?',
    });
    await s.advance(0);
    const again = state(s).usage.capsReached.filter((c) => !c.notice);
    expect(again).toHaveLength(1);
    expect(again[0]?.at).toBe(state(s).now);
  });
});

describe('the studio store keeps bounded lists', () => {
  it('the last 200 events, 200 playground messages and 100 finished actors', () => {
    const store = createStudioStore({ now: 0 });
    for (let i = 1; i <= 250; i += 1)
      store.send({ type: 'inspected', event: { type: 'actor.activated', at: i, channelKey: 'test:room' } });
    for (let i = 1; i <= 130; i += 1) {
      const opened = {
        type: 'thread.opened',
        at: i,
        threadId: `test:room:th${i}`,
        mode: 'mention',
        participants: ['a', 'b'],
        maxTurns: 4,
        expiresAt: i + 100,
      } satisfies FloorEffect;
      store.send({
        type: 'inspected',
        event: { type: 'floor.effect', at: i, channelKey: 'test:room', effect: opened },
      });
      store.send({
        type: 'inspected',
        event: {
          type: 'floor.effect',
          at: i,
          channelKey: 'test:room',
          effect: {
            type: 'thread.ended',
            at: i,
            threadId: `test:room:th${i}`,
            outcome: 'expired',
            detail: 'expired',
            turns: 0,
          },
        },
      });
    }
    for (let i = 1; i <= 230; i += 1)
      store.send({
        type: 'playgroundPosted',
        message: { id: `m${i}`, at: i, author: { kind: 'human', id: 'u', name: 'U' }, text: `hi ${i}` },
      });
    const s = store.getSnapshot().context;
    expect(s.events).toHaveLength(STUDIO_LIMITS.events);
    expect(s.events.at(-1)?.seq).toBe(250 + 260);
    expect(s.playground.messages).toHaveLength(STUDIO_LIMITS.messages);
    expect(s.playground.messages.at(-1)?.id).toBe('m230');
    const finished = s.actors.filter((a) => a.status === 'done');
    expect(finished).toHaveLength(STUDIO_LIMITS.finishedActors);
    // The newest are kept.
    expect(finished.map((a) => a.id)).toContain('thread:test:room:th130');
    expect(finished.map((a) => a.id)).not.toContain('thread:test:room:th1');
    expect(s.version).toBe(250 + 260 + 230);
  });
});
