import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  loadScenarioFile,
  parseDurationMs,
  parseScenarioText,
  renderScenarioJsonSchema,
  ScenarioError,
  scenarioConfigOverrides,
} from '../../src/simulator/index.js';

const base = `
name: t
avatars:
  - { id: luna, name: Luna, present: true }
  - { id: rex, name: Rex }
humans:
  - { id: sam, name: Sam }
`;

/** Parses YAML expected to fail and returns its problems as "path: message" lines. */
function problemsOf(yaml: string): string[] {
  try {
    parseScenarioText(yaml, 'bad.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(ScenarioError);
    const e = error as ScenarioError;
    expect(e.file).toBe('bad.yaml');
    expect(e.message).toContain('bad.yaml');
    return e.problems.map((p) => `${p.path}: ${p.message}`);
  }
  throw new Error('expected the scenario to be rejected');
}

describe('durations', () => {
  it('reads milliseconds and units', () => {
    expect(parseDurationMs(1500)).toBe(1500);
    expect(parseDurationMs('500ms')).toBe(500);
    expect(parseDurationMs('1.5s')).toBe(1500);
    expect(parseDurationMs('2m')).toBe(120_000);
    expect(parseDurationMs('1h')).toBe(3_600_000);
    expect(parseDurationMs('soon')).toBeUndefined();
    expect(parseDurationMs(-1)).toBeUndefined();
  });
});

describe('parsing scenarios', () => {
  it('fills defaults and turns durations into milliseconds', () => {
    const s = parseScenarioText(`${base}
config: { SUMMON_FOLLOWUP_DELAY: 3s, BOT_MENTION_CASCADE_LIMIT: 5, SUMMON_PROACTIVE_ENABLED: false }
script:
  - { after: 2s, human: sam, say: "hello @Luna" }
  - { wait: 1m }
  - { at: 2m, summon: rex, by: sam }
  - { after: 1s, human: sam, say: "hi", replyTo: "last:rex" }
`);
    expect(s.channel).toBe('general');
    expect(s.generationLatency).toBe(1500);
    expect(s.failures).toEqual([]);
    expect(s.avatars[1]?.present).toBe(false);
    expect(s.script[0]).toMatchObject({ after: 2000 });
    expect(s.script[1]).toEqual({ wait: 60_000 });
    expect(scenarioConfigOverrides(s)).toEqual({
      summonFollowUpDelayMs: 3000,
      botCascadeLimit: 5,
      summonProactiveEnabled: false,
    });
  });

  it('reads JSON too', () => {
    const s = parseScenarioText(
      JSON.stringify({
        name: 'j',
        avatars: [{ id: 'a', name: 'A' }],
        script: [{ narrate: 'hi' }],
      }),
    );
    expect(s.name).toBe('j');
  });

  it('names the field of a step that is wrong, for the kind of step the author meant', () => {
    expect(problemsOf(`${base}script:\n  - { after: 1s, summon: rex }\n`)).toEqual([
      'script[0].by: required (string)',
    ]);
    expect(problemsOf(`${base}script:\n  - { after: soon, human: sam, say: hi }\n`)).toEqual([
      expect.stringMatching(/^script\[0\]\.after: a duration/),
    ]);
    expect(problemsOf(`${base}script:\n  - { human: sam, sya: hi, say: hi }\n`)).toEqual([
      'script[0]: unknown field "sya"',
    ]);
  });

  it('refuses durations longer than a timer can wait, in steps and in config alike', () => {
    expect(problemsOf(`${base}script:\n  - { at: 600h, human: sam, say: hi }\n`)).toEqual([
      expect.stringMatching(/^script\[0\]\.at: .*at most 596h/),
    ]);
    expect(problemsOf(`${base}config: { CONVERSATION_THREAD_TTL: 600h }\nscript: [{ wait: 1s }]\n`)).toEqual([
      expect.stringMatching(/CONVERSATION_THREAD_TTL.*at most 596h/),
    ]);
    expect(problemsOf(`${base}script:\n  - { wait: ${'9'.repeat(309)} }\n`)).toEqual([
      expect.stringMatching(/^script\[0\]\.wait: .*at most 596h/),
    ]);
    // A number YAML reads as Infinity, in config too: named with the range, not "Invalid input".
    for (const huge of ['9'.repeat(309), '1e400', '.inf'])
      expect(
        problemsOf(
          `${base}config: { CONVERSATION_THREAD_TTL: ${huge}, THREAD_ACTIVITY_EXTENSION: ${huge} }\nscript: [{ wait: 1s }]\n`,
        ),
        huge,
      ).toEqual([
        expect.stringMatching(/^config\.CONVERSATION_THREAD_TTL: .*at most 596h/),
        expect.stringMatching(/^config\.THREAD_ACTIVITY_EXTENSION: .*at most 596h/),
      ]);
  });

  it('explains steps with no action or two actions', () => {
    expect(problemsOf(`${base}script:\n  - { say: hi }\n`)[0]).toMatch(
      /script\[0\]: a `say` step needs `human: <id>`/,
    );
    expect(problemsOf(`${base}script:\n  - { after: 1s }\n`)[0]).toMatch(
      /script\[0\]: a step needs one action/,
    );
    expect(problemsOf(`${base}script:\n  - { summon: rex, by: sam, dismiss: rex }\n`)[0]).toMatch(
      /script\[0\]: a step does one thing, but this one has `summon` and `dismiss`/,
    );
    expect(problemsOf(`${base}script:\n  - hello\n`)[0]).toMatch(/script\[0\]: a step is a mapping/);
  });

  it('checks references, time order and ids across the file', () => {
    const problems = problemsOf(`${base}
script:
  - { at: 10s, human: bob, say: hi }
  - { at: 5s, summon: nobody, by: sam }
  - { after: 1s, at: 20s, dismiss: rex }
  - { human: sam, say: hi, replyTo: "last:ghost", mentions: [rex, zed] }
  - { human: sam, say: hi, replyTo: first }
failures:
  - { avatar: ghost, nth: 1 }
`);
    expect(problems).toEqual([
      'script[0].human: no human with id "bob" (humans: sam)',
      'script[1].at: goes back in time: the previous step is already at 10000ms',
      'script[1].summon: no avatar with id "nobody" (avatars: luna, rex)',
      'script[2]: give either `at` (absolute) or `after` (relative), not both',
      'script[3].mentions[1]: no avatar with id "zed" (avatars: luna, rex)',
      'script[3].replyTo: "ghost" is neither an avatar nor a human id',
      'script[4].replyTo: "first" is not `last`, `last:<id>` or the label of an earlier step',
      'failures[0].avatar: no avatar with id "ghost" (avatars: luna, rex)',
    ]);
  });

  it('rejects duplicate ids and ambiguous names', () => {
    const problems = problemsOf(`
name: t
avatars:
  - { id: a, name: Luna }
  - { id: a, name: luna }
humans:
  - { id: a, name: Sam }
script:
  - { wait: 1s }
`);
    expect(problems).toEqual([
      'avatars[1].id: avatar id "a" is used twice',
      'avatars[1].name: "luna" is also a name of avatar "a" ("Luna"); mentions would be ambiguous',
      'humans[0].id: id "a" is already used by another avatar or human',
    ]);
  });

  it("reads an avatar's model as one text, provider:model or a profile name, and refuses a malformed one", () => {
    const s = parseScenarioText(
      `
name: t
avatars:
  - { id: luna, name: Luna, model: "openai:gpt-4o-mini" }
  - { id: rex, name: Rex, model: { provider: openai-compatible, id: "llama3.2:3b" } }
  - { id: pip, name: Pip, model: cheap }
  - { id: zed, name: Zed }
script:
  - { wait: 1s }
`,
      'models.yaml',
    );
    expect(s.avatars.map((a) => a.model)).toEqual([
      'openai:gpt-4o-mini',
      'openai-compatible:llama3.2:3b',
      'cheap',
      undefined,
    ]);
    expect(
      problemsOf(`
name: t
avatars:
  - { id: luna, name: Luna, model: "gpt 4o" }
script:
  - { wait: 1s }
`),
    ).toEqual(['avatars[0].model: no spaces: provider:model (e.g. openai:gpt-4o-mini) or a profile name']);
  });

  it('validates config overrides with the same rules as the environment', () => {
    const problems = problemsOf(`${base}
config: { BOT_MENTION_CASCADE_LIMIT: lots, SUMMON_FOLLOWUP_DELAY: -3, NOT_A_KNOB: 1 }
script: [{ wait: 1s }]
`);
    expect(problems).toContain('config.BOT_MENTION_CASCADE_LIMIT: a whole number from 0 to 100');
    expect(problems).toContain('config: unknown field "NOT_A_KNOB"');
    expect(problems.some((p) => p.startsWith('config.SUMMON_FOLLOWUP_DELAY:'))).toBe(true);
  });

  it('requires the essentials', () => {
    const problems = problemsOf('name: ""\navatars: []\nscript: []\n');
    expect(problems).toEqual([
      expect.stringMatching(/^name: /),
      expect.stringMatching(/^avatars: /),
      expect.stringMatching(/^script: /),
    ]);
  });

  it('reports YAML syntax errors with their line', () => {
    try {
      parseScenarioText('name: [unclosed\n', 'broken.yaml');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ScenarioError);
      expect((error as ScenarioError).code).toBe('TROUPE_SCENARIO_SYNTAX');
      expect((error as ScenarioError).message).toMatch(/broken\.yaml\n {2}.*line/);
    }
  });

  it('reports a missing file', async () => {
    await expect(loadScenarioFile('examples/does-not-exist.yaml')).rejects.toMatchObject({
      code: 'TROUPE_SCENARIO_UNREADABLE',
      file: 'examples/does-not-exist.yaml',
    });
  });

  it('parses every example', async () => {
    const files = (await readdir('examples')).filter((f) => /\.(ya?ml|json)$/.test(f));
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const file of files) await expect(loadScenarioFile(`examples/${file}`)).resolves.toBeTruthy();
  });
});

describe('JSON Schema', () => {
  it('the committed schemas/scenario.schema.json matches the zod schema (run `npm run schema`)', async () => {
    const committed = await readFile('schemas/scenario.schema.json', 'utf8');
    expect(committed).toBe(renderScenarioJsonSchema());
  });

  it('describes the hand-written form: durations as numbers or strings, defaults optional', () => {
    const schema = JSON.parse(renderScenarioJsonSchema());
    expect(schema.required).toEqual(['name', 'avatars', 'script']);
    expect(JSON.stringify(schema.properties.generationLatency)).toContain('"type":"string"');
    expect(schema.properties.script.items.anyOf).toHaveLength(7);
  });
});

describe('formatDuration', () => {
  it('rounds to whole seconds before splitting minutes, so it never prints 60s', async () => {
    const { formatDuration } = await import('../../src/config/duration.js');
    expect(formatDuration(299_600)).toBe('5m');
    expect(formatDuration(61_400)).toBe('1m 1s');
    expect(formatDuration(1_500)).toBe('1.5s');
  });
});
