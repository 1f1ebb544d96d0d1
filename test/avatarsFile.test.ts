import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAvatarsFile, parseAvatarsText } from '../src/cli/avatarsFile.js';
import { isTroupeError } from '../src/ports/troupeError.js';

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
});
