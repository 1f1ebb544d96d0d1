import { describe, expect, it } from 'vitest';
import { defaultCoordinationConfig } from '../../src/config/coordinationConfig.js';
import {
  type AvatarMessageEntry,
  formatTranscript,
  parseScenarioText,
  runScenario,
  type SimulationResult,
} from '../../src/simulator/index.js';

const cast = `
name: t
channel: lab
avatars:
  - { id: luna, name: Luna, emoji: "🌙", present: true, topics: [stars] }
  - { id: rex, name: Rex, emoji: "🦖", present: true, topics: [meteors] }
  - { id: pip, name: Pip, topics: [espresso] }
humans:
  - { id: sam, name: Sam }
`;

const sim = (yaml: string, options?: Parameters<typeof runScenario>[1]) =>
  runScenario(parseScenarioText(`${cast}${yaml}`), options);
const offline = (r: SimulationResult) =>
  r.transcript.filter((e): e is AvatarMessageEntry => e.type === 'avatar' && e.source === 'offline');

describe('runScenario', () => {
  it('answers a mention after the generation latency, in simulated time', () => {
    const r = sim(`generationLatency: 2s
script:
  - { at: 5s, human: sam, say: "hello @Luna" }
`);
    const [human, answer] = r.transcript.filter((e) => e.type === 'human' || e.type === 'avatar');
    expect(human).toMatchObject({ t: 5000, type: 'human', name: 'Sam', text: 'hello @Luna' });
    expect(answer).toMatchObject({
      t: 7000,
      avatarId: 'luna',
      rung: 'mention',
      kind: 'response',
      lane: 'main',
    });
    expect((answer as AvatarMessageEntry).reason).toMatch(/Luna was mentioned by Sam/);
  });

  it('a scripted failure at delivery releases the claim and the budget', () => {
    const r = sim(`failures: [{ avatar: luna, nth: 1, stage: delivery }]
script:
  - { at: 0s, human: sam, say: "Luna?" }
  - { after: 10s, human: sam, say: "Luna, again?" }
`);
    const failed = r.transcript.find((e) => e.type === 'turn.failed');
    expect(failed).toMatchObject({
      avatarId: 'luna',
      stage: 'delivery',
      reason: 'scripted delivery failure',
    });
    const released = r.transcript.find((e) => e.type === 'turn.released');
    expect(released).toMatchObject({ avatarId: 'luna' });
    expect(offline(r).map((m) => m.t)).toEqual([11_500]);
    expect(r.summary.turns).toEqual({ claimed: 2, delivered: 1, failed: 1, released: 1 });
  });

  it('a dismissal during generation drops the turn without errors', () => {
    const r = sim(`script:
  - { at: 0s, summon: pip, by: sam }
  - { after: 1s, dismiss: pip }
`);
    expect(offline(r)).toEqual([]);
    expect(r.transcript.map((e) => e.type)).toEqual(
      expect.arrayContaining(['summon', 'claim', 'turn.released', 'dismiss']),
    );
    expect(r.summary.rejected).toBe(0);
    expect(r.summary.notes).toBe(0);
  });

  it('honours config overrides on top of the base config', () => {
    const yaml = `script:
  - { at: 0s, human: sam, say: "hi all" }
  - { after: 1s, summon: pip, by: sam }
  - { wait: 1m }
`;
    const proactive = sim(yaml);
    expect(offline(proactive).some((m) => m.kind === 'follow-up')).toBe(true);
    const quiet = sim(`config: { SUMMON_PROACTIVE_ENABLED: false }\n${yaml}`);
    expect(offline(quiet).some((m) => m.kind === 'follow-up')).toBe(false);
    const base = sim(yaml, { config: { ...defaultCoordinationConfig, summonProactiveEnabled: false } });
    expect(offline(base).some((m) => m.kind === 'follow-up')).toBe(false);
    expect(base.config.summonProactiveEnabled).toBe(false);
  });

  it('resolves replyTo by label, last and last:<id>, and notes what it cannot resolve', () => {
    // Nobody speaks unprompted, so message ids follow the script.
    const r = sim(`config: { INITIATIVE_THRESHOLD: 1 }
script:
  - { at: 0s, human: sam, say: "morning", replyTo: "last:rex" }
  - { after: 1s, avatar: rex, say: "Morning to you too.", label: rexHello }
  - { after: 5s, human: sam, say: "nice", replyTo: rexHello }
  - { after: 5s, human: sam, say: "and you?", replyTo: last }
`);
    expect(
      r.transcript.filter((e) => e.type === 'note').map((e) => (e as { message: string }).message),
    ).toEqual(['replyTo "last:rex" found no message yet; sent as a plain message']);
    const replies = r.transcript.filter((e) => e.type === 'human' && e.replyTo);
    expect(replies[0]).toMatchObject({ replyTo: { messageId: 'm2', avatarId: 'rex' } });
    const byReply = offline(r).filter((m) => m.rung === 'reply');
    expect(byReply[0]).toMatchObject({ avatarId: 'rex', triggerMessageId: 'm3' });
  });

  it('runs simultaneous steps in script order', () => {
    const r = sim(`script:
  - { at: 0s, narrate: one }
  - { at: 0s, narrate: two }
  - { after: 0s, narrate: three }
`);
    expect(r.transcript.map((e) => (e.type === 'narration' ? e.text : e.type))).toEqual([
      'one',
      'two',
      'three',
    ]);
  });

  it('lets trailing waits pass, and sends ticks so threads end on time', () => {
    const r = sim(`config: { CONVERSATION_THREAD_QUIET: 10s }
script:
  - { at: 0s, human: sam, say: "hi" }
  - { after: 1s, avatar: luna, say: "Rex, meteors tonight?" }
  - { wait: 10m }
`);
    expect(r.summary.durationMs).toBe(601_000);
    const ended = r.transcript.find((e) => e.type === 'thread.ended');
    expect(ended).toBeDefined();
    expect(r.summary.threads[0]?.outcome).not.toBe('active');
  });

  it('always terminates, even against a floor whose deadline never moves', () => {
    const r = sim('script:\n  - { at: 0s, human: sam, say: go }\n', {
      maxEvents: 200,
      createFloor: () => {
        let now = 0;
        return {
          handle: (e) => {
            now = e.at;
            return [];
          },
          nextDeadline: () => now,
          view: () => ({ inFlight: [] }),
        };
      },
    });
    expect(r.summary.truncated).toBe('stopped after 200 events');
    expect(r.transcript.some((e) => e.type === 'note')).toBe(true);
  });
});

describe('formatTranscript', () => {
  const r = sim(`script:
  - { at: 0s, human: sam, say: "Luna, Rex, Pip: hello!" }
`);

  it('prints lines with the simulated clock, offline label and the rung', () => {
    const text = formatTranscript(r);
    expect(text).toContain('[00:00.0] Sam: Luna, Rex, Pip: hello!');
    expect(text).toMatch(
      /\[00:01\.5\] 🌙 Luna \(offline\): .+ {2}· rung mention — Luna was mentioned by Sam/,
    );
    expect(text).toContain('── Summary: t ──');
    expect(text).not.toContain('\u001b[');
    expect(text).not.toContain('suppressed Pip');
  });

  it('shows suppressed candidates only when verbose, and dims only with color', () => {
    expect(formatTranscript(r, { verbose: true })).toContain('suppressed Pip on m1: not-present');
    expect(formatTranscript(r, { color: true })).toContain('\u001b[2m· rung mention');
  });
});
