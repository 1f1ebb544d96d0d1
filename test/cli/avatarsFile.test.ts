import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAvatarsFile, parseAvatarsText } from '../../src/cli/avatarsFile.js';
import { isTroupeError } from '../../src/ports/troupeError.js';
import { parseScenarioText } from '../../src/simulator/scenario.js';

async function file(name: string, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-avatars-'));
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

async function failure(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isTroupeError(error)) throw new Error(`expected a TroupeError, got ${String(error)}`);
  return error;
}

describe('loadAvatarsFile', () => {
  it('reads the chat example: four avatars, some resident in terminal:lobby', async () => {
    const avatars = await loadAvatarsFile('examples/chat/avatars.yaml');
    expect(avatars).toHaveLength(4);
    expect(new Set(avatars.map((a) => a.name)).size).toBe(4);
    for (const a of avatars) {
      expect(a.emoji).toBeTruthy();
      expect(a.persona?.length).toBeGreaterThan(40);
      expect(a.topics?.length).toBeGreaterThan(0);
    }
    const residents = avatars.filter((a) => a.residentIn.includes('terminal:lobby'));
    expect(residents.length).toBeGreaterThanOrEqual(1);
    expect(residents.length).toBeLessThanOrEqual(2);
  });

  it('reads JSON and a bare list too, filling defaults', async () => {
    const path = await file('a.json', JSON.stringify([{ id: 'nova', name: 'Nova' }]));
    expect(await loadAvatarsFile(path)).toEqual([
      { id: 'nova', name: 'Nova', voice: 'on-request', residentIn: [], tools: [] },
    ]);
  });

  it('a missing file is TROUPE_AVATARS_NOT_FOUND, naming the file', async () => {
    const error = await failure(loadAvatarsFile('examples/nope.yaml'));
    expect(error.code).toBe('TROUPE_AVATARS_NOT_FOUND');
    expect(error.message).toContain('examples/nope.yaml');
  });

  it('a bad file names the file and every bad path with its line', async () => {
    const path = await file(
      'bad.yaml',
      [
        'avatars:',
        '  - id: nova',
        '    name: Nova',
        '    persnoa: typo',
        '  - id: "has space"',
        '    name: Rex',
        '  - id: nova',
        '    emoji: "🌿"',
        '',
      ].join('\n'),
    );
    const error = await failure(loadAvatarsFile(path));
    expect(error.code).toBe('TROUPE_AVATARS_INVALID');
    expect(error.message).toContain(path);
    expect(error.message).toContain('avatars[0] (line 2): unknown field "persnoa"');
    expect(error.message).toMatch(/avatars\[1\]\.id \(line 5\): .*letters, digits/);
    expect(error.message).toMatch(/avatars\[2\]\.name \(line 7\): required/);
    const problems = (error.details?.problems ?? []) as { path: string }[];
    expect(problems.map((p) => p.path)).toEqual(
      expect.arrayContaining(['avatars[0]', 'avatars[1].id', 'avatars[2].name']),
    );
  });

  it("reads an avatar's own caps, and names a bad one once", async () => {
    const good = await file(
      'caps.yaml',
      'avatars:\n  - { id: rex, name: Rex, caps: { maxTokensPerDay: 20000, maxCostPerDayUsd: 0.5 } }\n',
    );
    expect((await loadAvatarsFile(good))[0]?.caps).toEqual({
      maxTokensPerDay: 20_000,
      maxCostPerDayUsd: 0.5,
    });
    const bad = await file(
      'bad-caps.yaml',
      'avatars:\n  - { id: rex, name: Rex, caps: { maxTokensPerDay: -1, perHour: 3 } }\n',
    );
    const error = await failure(loadAvatarsFile(bad));
    const problems = (error.details?.problems ?? []) as { path: string; message: string }[];
    expect(problems.map((p) => p.path)).toEqual(['avatars[0].caps.maxTokensPerDay', 'avatars[0].caps']);
  });

  it('duplicate ids, an empty list and broken YAML are invalid too', () => {
    const dup = () =>
      parseAvatarsText('avatars:\n  - { id: a, name: A }\n  - { id: a, name: B }\n', 'dup.yaml');
    expect(dup).toThrow(/dup\.yaml[\s\S]*avatars\[1\]\.id \(line 3\): duplicate avatar id "a"/);
    expect(() => parseAvatarsText('avatars: []\n', 'empty.yaml')).toThrow(
      /avatars \(line 1\): list at least one avatar/,
    );
    expect(() => parseAvatarsText('', 'blank.yaml')).toThrow(/the file is empty/);
    expect(() => parseAvatarsText('avatars: [\n  - x', 'broken.yaml')).toThrow(
      /broken\.yaml[\s\S]*\(line 2\)/,
    );
  });

  it('a YAML alias bomb is TROUPE_AVATARS_INVALID, not a stack trace', () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const next = String.fromCharCode(97 + i);
      levels.push(`${next}: &${next} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const bomb = `${levels.join('\n')}\navatars:\n  - { id: x, name: X, topics: *i }\n`;
    let error: unknown;
    try {
      parseAvatarsText(bomb, 'bomb.yaml');
    } catch (e) {
      error = e;
    }
    expect(isTroupeError(error) && error.code).toBe('TROUPE_AVATARS_INVALID');
    expect((error as Error).message).toMatch(/bomb\.yaml[\s\S]*alias/iu);
    // The person is told what to change, and a scenario file says the same.
    expect((error as Error).message).toContain('write the repeated values out instead of aliasing them');
    const scenario = `${levels.join('\n')}\nname: t\navatars: [{ id: x, name: X, topics: *i }]\n`;
    expect(() => parseScenarioText(scenario, 'bomb.yaml')).toThrow(
      /bomb\.yaml[\s\S]*write the repeated values out instead of aliasing them/,
    );
  });

  it('a few aliases, as people use them, still read', () => {
    const avatars = parseAvatarsText(
      'avatars:\n  - { id: a, name: A, topics: &t [stars, comets] }\n  - { id: b, name: B, topics: *t }\n',
    );
    expect(avatars.map((a) => a.topics)).toEqual([
      ['stars', 'comets'],
      ['stars', 'comets'],
    ]);
  });

  it('refuses names and aliases that hold control characters, direction overrides or nothing visible', () => {
    const bad: [string, RegExp][] = [
      ['"Nova\\u001b[31m"', /control character \(U\+001B\)/],
      ['"No\\nva"', /control character \(U\+000A\)/],
      ['"Nova\\u0085"', /control character \(U\+0085\)/],
      ['"\\u202eavoN"', /control character \(U\+202E\)/],
      ['"\\u200b\\u200b"', /invisible character \(U\+200B\)/],
      ['"No\\u200bva"', /invisible character/],
      ['"\\u3164"', /no visible character/],
    ];
    for (const [name, message] of bad) {
      expect(() => parseAvatarsText(`avatars:\n  - { id: a, name: ${name} }\n`, 'n.yaml'), name).toThrow(
        message,
      );
      expect(
        () => parseAvatarsText(`avatars:\n  - { id: a, name: A, aliases: [ok, ${name}] }\n`, 'n.yaml'),
        name,
      ).toThrow(/avatars\[0\]\.aliases\[1\]/);
    }
    expect(() => parseAvatarsText('avatars:\n  - { id: a, name: A, emoji: "\\u001b[2J" }\n')).toThrow(
      /emoji[\s\S]*control character/,
    );
  });

  it('refuses a name or alias another avatar already answers to, in any case', () => {
    expect(() =>
      parseAvatarsText('avatars:\n  - { id: a, name: Nova }\n  - { id: b, name: NOVA }\n', 'case.yaml'),
    ).toThrow(
      /avatars\[1\]\.name \(line 3\): "NOVA" is also a name of avatar "a" \("Nova"\); mentions would be ambiguous/,
    );
    expect(() =>
      parseAvatarsText('avatars:\n  - { id: a, name: Nova, aliases: [Star] }\n  - { id: b, name: star }\n'),
    ).toThrow(/avatars\[1\]\.name[\s\S]*ambiguous/);
    // Its own name again as an alias is harmless.
    expect(parseAvatarsText('avatars:\n  - { id: a, name: Nova, aliases: [nova] }\n')).toHaveLength(1);
  });

  it('refuses a name spelt with Greek or Cyrillic letters that look like another avatar’s Latin ones; other names in those scripts are fine', () => {
    // "Wrеn" with a Cyrillic "е", "ΝΟVΑ" with Greek "Ν", "Ο" and "Α", "Вob" with a Cyrillic "В".
    for (const [taken, lookAlike] of [
      ['Wren', 'Wr\u0435n'],
      ['Nova', '\u039D\u039FV\u0391'],
      ['Bob', '\u0412ob'],
    ])
      expect(() =>
        parseAvatarsText(`avatars:\n  - { id: a, name: ${taken} }\n  - { id: b, name: "${lookAlike}" }\n`),
      ).toThrow(
        /avatars\[1\]\.name \(line 3\): ".+" looks like a name of avatar "a" \(".+"\): its Greek or Cyrillic letters look like Latin ones, so readers could not tell the two apart/,
      );
    // Names that are Greek or Cyrillic through and through, beside Latin ones.
    const cast = parseAvatarsText(
      'avatars:\n  - { id: a, name: Dmitri }\n  - { id: b, name: Дмитрий }\n  - { id: c, name: Σωκράτης }\n  - { id: d, name: Sokrates }\n',
    );
    expect(cast.map((a) => a.name)).toEqual(['Dmitri', 'Дмитрий', 'Σωκράτης', 'Sokrates']);
  });

  it('refuses an emoji another avatar answers to (it addresses the avatar too), or one with nothing visible', () => {
    // The same emoji, also when one carries the emoji presentation selector.
    expect(() =>
      parseAvatarsText(
        'avatars:\n  - { id: a, name: Nova, emoji: "🌙" }\n  - { id: b, name: Luna, emoji: "🌙\\ufe0f" }\n',
        'moon.yaml',
      ),
    ).toThrow(/avatars\[1\]\.emoji \(line 3\): .*avatar "a".*mentions would be ambiguous/);
    expect(() =>
      parseAvatarsText(
        'avatars:\n  - { id: a, name: Nova, aliases: [N] }\n  - { id: b, name: B, emoji: n }\n',
      ),
    ).toThrow(/avatars\[1\]\.emoji[\s\S]*ambiguous/);
    for (const [emoji, message] of [
      ['\\u200b', /invisible character \(U\+200B\)/],
      ['\\ufe0f', /no visible character/],
      ['\\u3164', /no visible character/],
    ] as const)
      expect(() => parseAvatarsText(`avatars:\n  - { id: a, name: A, emoji: "${emoji}" }\n`), emoji).toThrow(
        message,
      );
    // Joiners, selectors, keycaps and tag sequences (subdivision flags) are what emoji are made of.
    const emojis = ['👩‍🚀', '⚙️', '1️⃣', '🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}', '🇫🇷'];
    const list = emojis.map((emoji, i) => ({ id: `e${i}`, name: `E${i}`, emoji }));
    expect(parseAvatarsText(JSON.stringify({ avatars: list })).map((a) => a.emoji)).toEqual(emojis);
  });

  it('accepts names people have: accents, other scripts, punctuation, emoji with joiners', () => {
    const avatars = parseAvatarsText(
      [
        'avatars:',
        '  - { id: a, name: Dr. Who }',
        '  - { id: b, name: Zoë, aliases: [Zoe] }',
        '  - { id: c, name: 李白 }',
        '  - { id: d, name: Mary-Jane O’Neil }',
        '  - { id: e, name: "می‌خواهم", emoji: "👩‍🚀" }',
      ].join('\n'),
    );
    expect(avatars.map((a) => a.name)).toEqual(['Dr. Who', 'Zoë', '李白', 'Mary-Jane O’Neil', 'می‌خواهم']);
  });
});

describe('one validation for avatars everywhere', () => {
  it('createRuntime and scenario files apply the same name rules as avatars files', async () => {
    const { createRuntime } = await import('../../src/createRuntime.js');
    const { parseScenarioText } = await import('../../src/simulator/scenario.js');
    expect(() => createRuntime({ avatars: [{ id: 'a', name: 'Nova\u001b[2J' }] })).toThrow(
      /control character/,
    );
    expect(() =>
      createRuntime({
        avatars: [
          { id: 'a', name: 'Nova' },
          { id: 'b', name: 'x', aliases: ['NOVA'] },
        ],
      }),
    ).toThrow(/ambiguous/);
    const scenario = (avatars: string) =>
      `name: t\navatars:\n${avatars}\nhumans:\n  - { id: u, name: U }\nscript:\n  - { at: 0s, human: u, say: hi }\n`;
    expect(() => parseScenarioText(scenario('  - { id: a, name: "Nova\\u001b[2J" }'))).toThrow(
      /control character/,
    );
    expect(() =>
      parseScenarioText(scenario('  - { id: a, name: Nova }\n  - { id: b, name: B, aliases: [nova] }')),
    ).toThrow(/ambiguous/);
    expect(() =>
      createRuntime({
        avatars: [
          { id: 'a', name: 'Nova', emoji: '🔭' },
          { id: 'b', name: 'Rex', emoji: '🔭' },
        ],
      }),
    ).toThrow(/avatars\.1\.emoji: .*ambiguous/);
    expect(() =>
      parseScenarioText(
        scenario('  - { id: a, name: Nova, emoji: "🔭" }\n  - { id: b, name: Rex, emoji: "🔭" }'),
      ),
    ).toThrow(/avatars\[1\]\.emoji: .*ambiguous/);
    expect(() => createRuntime({ avatars: [{ id: 'a', name: 'Nova', emoji: '\u200b' }] })).toThrow(
      /emoji: has an invisible character/,
    );
  });
});
