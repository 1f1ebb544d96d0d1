import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { type CliIo, runCli } from '../../src/cli/program.js';

const exec = promisify(execFile);

/** Runs `npx tsx src/cli/main.ts ...args` as a child process and returns its exit code and output. */
async function troupe(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await exec('npx', ['tsx', 'src/cli/main.ts', ...args], {
      env: { ...process.env, NO_COLOR: '1', ...env },
      maxBuffer: 32 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Runs the CLI in-process with captured output. */
async function inProcess(args: string[], env: Record<string, string | undefined> = {}, isTTY = false) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env, isTTY };
  const code = await runCli(args, io);
  return { code, stdout, stderr };
}

async function badScenarioFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-cli-'));
  const file = join(dir, 'bad.yaml');
  await writeFile(
    file,
    'name: bad\navatars: [{ id: luna, name: Luna }]\nscript:\n  - { after: soon, summon: luna, by: nobody }\n',
  );
  return file;
}

describe('troupe CLI (child process)', () => {
  it('simulate --json prints parseable { scenario, transcript, summary }', async () => {
    const { code, stdout } = await troupe(['simulate', 'examples/mention-back-and-forth.yaml', '--json']);
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out.scenario.name).toBe('mention-back-and-forth');
    expect(Array.isArray(out.transcript)).toBe(true);
    expect(out.summary.exits.concluded).toBe(1);
    expect(out.config.botCascadeLimit).toBe(3);
  });

  it('a bad scenario file exits 2 with code, file, path and message on stderr', async () => {
    const file = await badScenarioFile();
    const { code, stdout, stderr } = await troupe(['simulate', file]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(`error TROUPE_SCENARIO_INVALID: ${file}`);
    expect(stderr).toMatch(/script\[0\]\.after: a duration/);
  });

  it('a bad environment config exits 2 with its message', async () => {
    const { code, stderr } = await troupe(['simulate', 'examples/tour.yaml'], {
      BOT_MENTION_CASCADE_LIMIT: 'lots',
    });
    expect(code).toBe(2);
    expect(stderr).toContain('TROUPE_CONFIG_INVALID');
    expect(stderr).toContain('BOT_MENTION_CASCADE_LIMIT="lots"');
  });
});

describe('troupe CLI (in process)', () => {
  it('simulate reads BOT_MENTION_CASCADE_LIMIT from the environment: with 1, one named avatar answers in the cascade lane', async () => {
    const lanes = async (env: Record<string, string>) => {
      const { code, stdout } = await inProcess(['simulate', 'examples/group-mention.yaml', '--json'], env);
      expect(code).toBe(0);
      const out = JSON.parse(stdout) as { transcript: { type: string; avatarId?: string; lane?: string }[] };
      return out.transcript.filter((e) => e.type === 'avatar' && e.lane === 'cascade').map((e) => e.avatarId);
    };
    expect(await lanes({})).toEqual(['bo', 'cy']);
    expect(await lanes({ BOT_MENTION_CASCADE_LIMIT: '1' })).toEqual(['bo']);
  });

  it('tour prints the transcript, the summary and how to go on', async () => {
    const { code, stdout, stderr } = await inProcess(['tour']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toContain('▶ tour');
    expect(stdout).toContain('(offline)');
    expect(stdout).toContain('── Summary: tour ──');
    expect(stdout).toMatch(
      /Next: run another scenario with `npx troupe simulate examples\/<file>` \(.*crowd-10-avatars\.yaml/,
    );
  });

  it('simulate prints text; --verbose adds suppressed candidates; color only on a TTY', async () => {
    const plain = await inProcess(['simulate', 'examples/crowd-10-avatars.yaml']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toContain('· suppressed');
    expect(plain.stdout).not.toContain('\u001b[');
    const verbose = await inProcess(['simulate', 'examples/crowd-10-avatars.yaml', '--verbose']);
    expect(verbose.stdout).toContain('· suppressed');
    const tty = await inProcess(['simulate', 'examples/tour.yaml'], {}, true);
    expect(tty.stdout).toContain('\u001b[2m');
    const noColor = await inProcess(['simulate', 'examples/tour.yaml'], { NO_COLOR: '1' }, true);
    expect(noColor.stdout).not.toContain('\u001b[');
  });

  it('scenario config overrides apply on top of the environment', async () => {
    const { stdout } = await inProcess(['simulate', 'examples/summon-followup-exit.yaml', '--json'], {
      MAX_RESPONSES_PER_MESSAGE: '2',
      SUMMON_FOLLOWUP_DELAY: '9s',
    });
    const out = JSON.parse(stdout);
    expect(out.config.maxResponsesPerMessage).toBe(2); // from the environment
    expect(out.config.summonFollowUpDelayMs).toBe(3_000); // the scenario's config wins
  });

  it('a missing file exits 2', async () => {
    const { code, stderr } = await inProcess(['simulate', 'examples/missing.yaml']);
    expect(code).toBe(2);
    expect(stderr).toBe('error TROUPE_SCENARIO_UNREADABLE: examples/missing.yaml\n  no such file\n');
  });

  it('usage errors exit 1 and help exits 0', async () => {
    expect((await inProcess(['simulate'])).code).toBe(1);
    expect((await inProcess(['frobnicate'])).code).toBe(1);
    const help = await inProcess(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('simulate');
  });

  it('simulate prints a scenario’s escape sequences as text, never as terminal control', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-cli-'));
    const file = join(dir, 'escapes.yaml');
    await writeFile(
      file,
      [
        'name: "esc \\e]0;title\\a"',
        'avatars:',
        '  - { id: luna, name: Luna, present: true }',
        'humans:',
        '  - { id: sam, name: "Sam" }',
        'script:',
        '  - { at: 0s, human: sam, say: "Luna \\e]0;pwned\\a hi \\e[2J there\\r[9] forged" }',
      ].join('\n'),
    );
    for (const isTTY of [false, true]) {
      const result = await inProcess(['simulate', file, '--verbose'], {}, isTTY);
      expect(result.code).toBe(0);
      // Colour (on a TTY) uses only SGR sequences; nothing else from the file reaches the terminal.
      const withoutColour = ['[1m', '[2m', '[22m'].reduce(
        (text, sgr) => text.replaceAll(`\u001b${sgr}`, ''),
        result.stdout,
      );
      for (const control of ['\u001b', '\u0007']) expect(withoutColour).not.toContain(control);
      expect(withoutColour).toContain('Sam: Luna  hi  there␍[9] forged');
    }
  });

  it('a scenario file’s YAML directive is not printed raw as a Node warning either', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-cli-'));
    const file = join(dir, 'directive.yaml');
    // An unknown directive made the YAML library print a process warning quoting the line as is.
    await writeFile(file, '%\u001b]0;pwned\u0007\u001b[2J\n---\nname: t\n');
    const result = await troupe(['simulate', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('TROUPE_SCENARIO_INVALID');
    for (const control of ['\u001b', '\u0007']) expect(result.stderr).not.toContain(control);
  });

  it('a scenario file’s escape sequences are not printed raw in its errors either', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-cli-'));
    const file = join(dir, 'bad-escapes.yaml');
    await writeFile(
      file,
      'name: t\navatars: [{ id: luna, name: Luna, "\\e]0;pwned\\a\\e[2Jx": 1 }]\nhumans: [{ id: u, name: U }]\nscript: []\n',
    );
    const bad = await inProcess(['simulate', file]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown field "x"');
    const badEnv = await inProcess(['simulate', 'examples/tour.yaml'], {
      BOT_MENTION_CASCADE_LIMIT: '\u009b2J',
    });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toContain('TROUPE_CONFIG_INVALID');
    for (const control of ['\u001b', '\u0007', '\u009b'])
      expect(bad.stderr + badEnv.stderr).not.toContain(control);
  });
});
