import { readdir } from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type AvatarMessageEntry,
  formatTranscript,
  loadScenarioFile,
  runScenario,
  type SimulationResult,
  type TranscriptEntry,
} from '../../src/simulator/index.js';

async function run(name: string): Promise<SimulationResult> {
  return runScenario(await loadScenarioFile(`examples/${name}.yaml`));
}

const offline = (r: SimulationResult) =>
  r.transcript.filter((e): e is AvatarMessageEntry => e.type === 'avatar' && e.source === 'offline');

const threadEnds = (r: SimulationResult) =>
  r.transcript.filter(
    (e): e is Extract<TranscriptEntry, { type: 'thread.ended' }> => e.type === 'thread.ended',
  );

/** Checks that hold for every run: the floor's limits, seen from the outside. */
function expectFloorInvariants(r: SimulationResult) {
  const messages = new Map<string, { authorId: string; human: boolean }>();
  // The message that opened each thread: the one just before its `thread.opened`.
  const openedBy = new Map<string, string>();
  let lastMessageId: string | undefined;
  for (const e of r.transcript) {
    if (e.type === 'human') messages.set(e.messageId, { authorId: e.authorId, human: true });
    if (e.type === 'avatar') messages.set(e.messageId, { authorId: e.avatarId, human: false });
    if (e.type === 'human' || e.type === 'avatar') lastMessageId = e.messageId;
    if (e.type === 'thread.opened' && lastMessageId !== undefined) openedBy.set(e.threadId, lastMessageId);
  }
  const perAnchor = new Map<string, { main: number; cascade: number }>();
  for (const m of offline(r)) {
    // Every avatar turn says which rung chose it, and why.
    expect(m.rung, m.text).toBeTruthy();
    expect(m.reason, m.text).toBeTruthy();
    // No avatar answers itself.
    expect(m.addressedById).not.toBe(m.avatarId);
    if (m.triggerMessageId !== undefined) {
      const trigger = messages.get(m.triggerMessageId);
      expect(trigger?.authorId).not.toBe(m.avatarId);
      // Answers to people are main turns; answers to avatars are thread turns inside a thread,
      // cascade turns outside one and to the message that opened the thread.
      const opening = m.threadId !== undefined && openedBy.get(m.threadId) === m.triggerMessageId;
      if (trigger?.human) expect(m.lane).toBe('main');
      else expect(m.lane).toBe(m.threadId !== undefined && !opening ? 'thread' : 'cascade');
    }
    const counts = perAnchor.get(m.anchorMessageId ?? '') ?? { main: 0, cascade: 0 };
    if (m.lane === 'main' || m.lane === 'cascade') counts[m.lane] += 1;
    perAnchor.set(m.anchorMessageId ?? '', counts);
  }
  for (const [anchor, counts] of perAnchor) {
    expect(counts.cascade, `cascade after ${anchor}`).toBeLessThanOrEqual(r.config.botCascadeLimit);
    expect(counts.main, `answers to ${anchor}`).toBeLessThanOrEqual(r.config.maxResponsesPerMessage);
  }
  for (const t of r.summary.threads) {
    expect(t.turns, t.id).toBeLessThanOrEqual(t.maxTurns);
    expect(t.outcome, `${t.id} should have ended`).not.toBe('active');
  }
  // The run settled on its own: nothing left in flight, no cap hit, nothing rejected.
  expect(r.summary.truncated).toBeUndefined();
  expect(r.summary.rejected).toBe(0);
  expect(r.transcript.filter((e) => e.type === 'note')).toEqual([]);
  expect(r.summary.turns.claimed).toBe(r.summary.turns.delivered + r.summary.turns.released);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('examples', () => {
  it('summon-followup-exit: greeting, then a follow-up naming who is present, then a natural end', async () => {
    const r = await run('summon-followup-exit');
    expectFloorInvariants(r);
    const rex = offline(r).filter((m) => m.avatarId === 'rex');
    expect(rex[0]?.kind).toBe('greeting');
    expect(rex[0]?.rung).toBe('greeting');
    expect(rex[0]?.text.length).toBeLessThanOrEqual(r.config.greetingMaxChars);
    const followUp = rex.find((m) => m.kind === 'follow-up');
    expect(followUp?.rung).toBe('follow-up');
    expect(followUp?.text).toMatch(/Luna/);
    expect(followUp?.text).toMatch(/Pip/);
    expect(followUp?.t).toBeGreaterThanOrEqual((rex[0]?.t ?? 0) + r.config.summonFollowUpDelayMs);
    expect(r.summary.threads).toHaveLength(1);
    expect(r.summary.threads[0]).toMatchObject({ mode: 'summon', outcome: 'concluded' });
    // The thread ends after the follow-up, on its own (not at the 5-minute deadline).
    const [ended] = threadEnds(r);
    expect(ended?.t).toBeGreaterThanOrEqual(followUp?.t ?? Number.POSITIVE_INFINITY);
    expect(ended?.t).toBeLessThan(r.config.summonConversationDurationMs);
    expect(offline(r).some((m) => m.farewell)).toBe(true);
  });

  it('mention-back-and-forth: B answers A, A answers B, and the thread concludes', async () => {
    const r = await run('mention-back-and-forth');
    expectFloorInvariants(r);
    const turns = offline(r).filter((m) => m.threadId !== undefined);
    expect(turns[0]).toMatchObject({ avatarId: 'bo', addressedById: 'ada' });
    expect(turns[0]?.text).toMatch(/^Ada, /);
    expect(turns[1]).toMatchObject({ avatarId: 'ada', addressedById: 'bo' });
    expect(r.summary.threads).toHaveLength(1);
    expect(r.summary.threads[0]).toMatchObject({
      mode: 'mention',
      outcome: 'concluded',
      participants: ['ada', 'bo'],
    });
    expect(turns.every((m) => m.avatarId !== 'moss')).toBe(true);
  });

  it('group-mention: B and C both answer A within the cascade budget', async () => {
    const r = await run('group-mention');
    expectFloorInvariants(r);
    const thread = r.summary.threads[0];
    expect(thread).toMatchObject({ mode: 'mention', outcome: 'concluded' });
    expect(thread?.participants).toEqual(expect.arrayContaining(['ada', 'bo', 'cy']));
    expect(thread?.speakers.bo).toBeGreaterThanOrEqual(1);
    expect(thread?.speakers.cy).toBeGreaterThanOrEqual(1);
    const answers = offline(r).filter((m) => m.threadId === thread?.id);
    expect(answers.filter((m) => m.addressedById === 'ada').map((m) => m.avatarId)).toEqual(
      expect.arrayContaining(['bo', 'cy']),
    );
  });

  it('cascade-limit and cascade-limit-1: BOT_MENTION_CASCADE_LIMIT bounds who answers the message that opens a thread', async () => {
    const asked = (r: SimulationResult) =>
      r.transcript.find(
        (e): e is AvatarMessageEntry => e.type === 'avatar' && e.source === 'script' && e.avatarId === 'ada',
      )?.messageId;
    const answersTo = (r: SimulationResult, messageId: string | undefined) =>
      offline(r)
        .filter((m) => m.triggerMessageId === messageId)
        .map((m) => `${m.avatarId}:${m.rung}/${m.lane}`);

    const byDefault = await run('cascade-limit');
    expectFloorInvariants(byDefault);
    expect(byDefault.config.botCascadeLimit).toBe(3);
    expect(answersTo(byDefault, asked(byDefault))).toEqual(['bo:thread/cascade', 'cy:thread/cascade']);

    const limited = await run('cascade-limit-1');
    expectFloorInvariants(limited);
    expect(limited.config.botCascadeLimit).toBe(1);
    expect(answersTo(limited, asked(limited))).toEqual(['bo:thread/cascade']);
    expect(limited.transcript).toContainEqual(
      expect.objectContaining({
        type: 'suppressed',
        avatarId: 'cy',
        messageId: asked(limited),
        reason: 'mention-cap',
      }),
    );
    // Cy speaks only later, as a turn the thread pays for.
    expect(
      offline(limited)
        .filter((m) => m.avatarId === 'cy')
        .map((m) => `${m.rung}/${m.lane}`),
    ).toEqual(['thread/thread']);
    expect(formatTranscript(limited)).toContain('· thread workshop:th1 (cascade lane)');
  });

  it('group-mention with BOT_MENTION_CASCADE_LIMIT=1 from the base config: one of the two named answers', async () => {
    const scenario = await loadScenarioFile('examples/group-mention.yaml');
    const byDefault = runScenario(scenario);
    const limited = runScenario(scenario, { config: { ...byDefault.config, botCascadeLimit: 1 } });
    expectFloorInvariants(limited);
    const cascade = (r: SimulationResult) =>
      offline(r)
        .filter((m) => m.lane === 'cascade')
        .map((m) => m.avatarId);
    expect(cascade(byDefault)).toEqual(['bo', 'cy']);
    expect(cascade(limited)).toEqual(['bo']);
    expect(formatTranscript(limited)).not.toBe(formatTranscript(byDefault));
  });

  it('tour: a mention, a summon with greeting and follow-up, and a thread that ends naturally', async () => {
    const r = await run('tour');
    expectFloorInvariants(r);
    const rungs = offline(r).map((m) => m.rung);
    expect(rungs).toEqual(expect.arrayContaining(['mention', 'greeting', 'follow-up', 'thread']));
    expect(r.summary.exits.concluded).toBeGreaterThanOrEqual(1);
    expect(r.transcript.some((e) => e.type === 'summon')).toBe(true);
    expect(r.transcript.some((e) => e.type === 'dismiss')).toBe(true);
    expect(r.transcript.some((e) => e.type === 'narration')).toBe(true);
  });

  it('keeps-the-conversation: the avatar a person is talking to answers a follow-up, not a bystander', async () => {
    const r = await run('keeps-the-conversation');
    expectFloorInvariants(r);
    const replies = offline(r).map((m) => `${m.avatarId}:${m.rung}`);
    // The follow-ups name nobody: Pip's summon rung waits on its cooldown, affinity answers.
    expect(replies).toEqual(['pip:mention', 'pip:affinity', 'pip:affinity']);
    expect(r.transcript).toContainEqual(
      expect.objectContaining({ type: 'suppressed', avatarId: 'pip', rung: 'summon', reason: 'cooldown' }),
    );
  });

  it('absent-avatar: nobody answers in the place of an avatar who is not here, and the transcript says so', async () => {
    const r = await run('absent-avatar');
    expectFloorInvariants(r);
    const first = offline(r)[0];
    expect(first).toMatchObject({ avatarId: 'nova', rung: 'greeting' }); // nothing before the summon
    expect(r.transcript).toContainEqual(
      expect.objectContaining({ type: 'suppressed', avatarId: 'luna', reason: 'addressed-absent' }),
    );
    const text = formatTranscript(r, { summary: false });
    expect(text).toContain(
      "🔇 Nova is not here, so nobody answers in Nova's place (summon Nova to bring them in)",
    );
    expect(offline(r).find((m) => m.rung === 'mention')).toMatchObject({ avatarId: 'nova' });
  });

  it('topic-initiative: a multi-word topic, in capitals and plural, brings its avatar in on initiative', async () => {
    const r = await run('topic-initiative');
    expectFloorInvariants(r);
    expect(offline(r).map((m) => [m.avatarId, m.rung])).toEqual([
      ['dewey', 'initiative'],
      ['rex', 'initiative'],
    ]);
    expect(offline(r)[0]?.reason).toContain('topic 0.50');
  });

  it('crowd-10-avatars: heavy traffic stays inside every limit', async () => {
    const r = await run('crowd-10-avatars');
    expect(r.scenario.avatars.length).toBeGreaterThanOrEqual(10);
    expectFloorInvariants(r);
    expect(r.summary.durationMs).toBeGreaterThanOrEqual(3 * 60_000);
    expect(r.transcript.filter((e) => e.type === 'summon')).toHaveLength(2);
    expect(r.summary.threads.length).toBeGreaterThanOrEqual(3);
    // Threads are budgeted by their own turn limit, so some reach it.
    expect(r.summary.exits.exhausted).toBeGreaterThan(0);
    // Budgets did real work: candidates were held back, and not only for one reason.
    expect(r.summary.suppressed.total).toBeGreaterThan(5);
    expect(Object.keys(r.summary.suppressed.byReason).length).toBeGreaterThanOrEqual(2);
    // The scripted failure released its claim, and the avatar spoke again later.
    expect(r.summary.turns.failed).toBe(1);
    expect(r.summary.turns.released).toBe(1);
    const failed = r.transcript.find((e) => e.type === 'turn.failed');
    expect(offline(r).some((m) => m.avatarId === 'rex' && m.t > (failed?.t ?? 0))).toBe(true);
    // Bot-to-bot messages after each human message (or summon command) never exceed the cascade limit.
    let sinceHuman = 0;
    for (const e of r.transcript) {
      if (e.type === 'human' || e.type === 'summon') sinceHuman = 0;
      else if (e.type === 'avatar' && e.source === 'offline' && e.lane === 'cascade') {
        sinceHuman += 1;
        expect(sinceHuman, `${e.messageId} at ${e.t}`).toBeLessThanOrEqual(r.config.botCascadeLimit);
      }
    }
  });

  it('every example replays identically, without Math.random or the wall clock', async () => {
    const files = (await readdir('examples')).filter((f) => f.endsWith('.yaml'));
    for (const file of files) {
      const scenario = await loadScenarioFile(`examples/${file}`);
      const first = JSON.stringify(runScenario(scenario));
      const random = vi.spyOn(Math, 'random').mockImplementation(() => {
        throw new Error('Math.random used');
      });
      const now = vi.spyOn(Date, 'now').mockImplementation(() => {
        throw new Error('Date.now used');
      });
      const second = JSON.stringify(runScenario(scenario));
      random.mockRestore();
      now.mockRestore();
      expect(second, file).toBe(first);
      expect(formatTranscript(runScenario(scenario))).toBe(formatTranscript(runScenario(scenario)));
    }
  });
});
