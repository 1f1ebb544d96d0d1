import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runEmail, runInboxAnswer, runInboxList, runInboxShow } from '../../src/cli/email.js';
import { runPreferences } from '../../src/cli/emailPreferences.js';
import { runStudio } from '../../src/cli/studio.js';
import { runTriageEval } from '../../src/cli/triageEval.js';
import { runUsage } from '../../src/cli/usage.js';
import { logLevelFromEnv, logLevels } from '../../src/logging/logLevel.js';
import { runTroupe } from '../support/runTroupe.js';

/** Every command of the CLI, with the arguments it needs to get as far as reading its settings. */
const commands: [string, string[]][] = [
  ['tour', ['tour']],
  ['chat', ['chat']],
  ['discord', ['discord']],
  ['studio', ['studio', '--port', '0']],
  ['email', ['email']],
  ['inbox list', ['inbox', 'list']],
  ['inbox list --json', ['inbox', 'list', '--json']],
  ['inbox show', ['inbox', 'show', 'sample-02#1']],
  ['inbox answer', ['inbox', 'answer', 'sample-02#1', 'ignore']],
  ['preferences', ['preferences']],
  ['triage-eval', ['triage-eval', 'examples/email/triage-eval.jsonl']],
  ['simulate', ['simulate', 'examples/tour.yaml']],
  ['charts', ['charts']],
  ['diagram', ['diagram', 'email']],
  ['usage', ['usage']],
];

describe('LOG_LEVEL', () => {
  it.each(commands)(
    'a bad value is TROUPE_CONFIG_INVALID in `troupe %s`, listing the levels, without a stack',
    async (_name, args) => {
      const env = {
        TROUPE_DATA_DIR: await mkdtemp(join(tmpdir(), 'troupe-log-level-')),
        TROUPE_STORE: 'memory',
        DISCORD_TOKEN: 'x'.repeat(70),
        DISCORD_APPLICATION_ID: '123456789012345678',
        LOG_LEVEL: 'loud',
      };
      const run = await runTroupe(args, env);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^error TROUPE_CONFIG_INVALID: /u);
      expect(run.stderr).toContain('LOG_LEVEL="loud"');
      for (const level of logLevels) expect(run.stderr).toContain(level);
      expect(run.stderr).not.toMatch(/\n\s+at /u);
      expect(run.stderr).not.toContain('unknown level');
    },
  );

  it('each command function refuses it too when called directly (as an embedding program may)', async () => {
    let stderr = '';
    const io = {
      stdout: (t: string) => {
        throw new Error(`nothing belongs on stdout: ${t}`);
      },
      stderr: (t: string) => {
        stderr += t;
      },
      env: { TROUPE_STORE: 'memory', LOG_LEVEL: 'LOUD' },
    };
    const runs: [string, () => Promise<number>][] = [
      ['email', () => runEmail({ ...io, mailboxFile: 'examples/email/sample-mailbox.jsonl' })],
      ['inbox list', () => runInboxList(io)],
      ['inbox show', () => runInboxShow({ ...io, id: 'sample-02#1' })],
      ['inbox answer', () => runInboxAnswer({ ...io, id: 'sample-02#1', type: 'ignore' })],
      ['preferences', () => runPreferences({ ...io, history: false })],
      ['triage-eval', () => runTriageEval({ ...io, file: 'examples/email/triage-eval.jsonl', json: false })],
      ['studio', () => runStudio({ ...io, port: '0', stopSignal: Promise.resolve('SIGINT') })],
      ['usage', () => runUsage({ ...io, by: 'avatar', since: '24h', json: false })],
    ];
    for (const [name, run] of runs) {
      stderr = '';
      expect(await run(), name).toBe(2);
      expect(stderr, name).toMatch(
        /^error TROUPE_CONFIG_INVALID: [\s\S]*LOG_LEVEL="LOUD" is not allowed; expected one of fatal, error, warn, info, debug, trace, silent/u,
      );
    }
  });

  it('is read trimmed and in any case; unset or blank, each command keeps its default', () => {
    expect(logLevelFromEnv({ LOG_LEVEL: ' DEBUG ' })).toBe('debug');
    expect(logLevelFromEnv({ LOG_LEVEL: 'Silent' }, 'warn')).toBe('silent');
    expect(logLevelFromEnv({}, 'warn')).toBe('warn');
    expect(logLevelFromEnv({ LOG_LEVEL: '  ' }, 'warn')).toBe('warn');
    expect(() => logLevelFromEnv({ LOG_LEVEL: 'verbose' })).toThrow(/LOG_LEVEL="verbose" is not allowed/u);
  });

  it('a good value in any case runs the command', async () => {
    const env = {
      TROUPE_DATA_DIR: await mkdtemp(join(tmpdir(), 'troupe-log-level-')),
      TROUPE_EMAIL_NOW: '2026-11-25T09:00:00Z',
      LOG_LEVEL: ' Silent ',
    };
    const run = await runTroupe(['email'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });
});
