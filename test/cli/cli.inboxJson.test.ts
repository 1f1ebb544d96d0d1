import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { inboxItemJsonSchema, inboxListJsonSchema } from '../../src/email/index.js';
import { runTroupe } from '../support/runTroupe.js';

const exec = promisify(execFile);

async function inbox() {
  const env = {
    TROUPE_DATA_DIR: await mkdtemp(join(tmpdir(), 'troupe-inbox-json-')),
    TROUPE_EMAIL_NOW: '2026-11-25T09:00:00Z',
    TROUPE_EMAIL_TIME_ZONE: 'Europe/Berlin',
    LOG_LEVEL: 'silent',
  };
  expect((await runTroupe(['email'], env)).code).toBe(0);
  return env;
}

describe('troupe inbox list --json and show --json', () => {
  it('list prints the pending interrupts as a JSON array the exported schema reads, and nothing else', async () => {
    const env = await inbox();
    const run = await runTroupe(['inbox', 'list', '--json'], env);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const items = inboxListJsonSchema.parse(JSON.parse(run.stdout));
    expect(items.map((i) => i.id)).toEqual([
      'sample-02#1',
      'sample-03#1',
      'sample-04#1',
      'sample-05#1',
      'sample-07#1',
      'sample-08#1',
    ]);
    const reply = items.find((i) => i.id === 'sample-03#1');
    expect(reply).toMatchObject({
      emailId: 'sample-03',
      status: 'pending',
      call: { action: 'send_email_tool', args: { to: 'marco@acme.dev' } },
      allowed: ['accept', 'edit', 'response', 'ignore'],
      email: {
        from: 'Marco Rossi <marco@acme.dev>',
        to: 'sam@acme.dev',
        subject: 'Quick question about the API limits',
        date: '2026-11-25T08:05:00Z',
        messageId: '<sample-03@mail.example>',
      },
      createdAt: '2026-11-25T09:00:00.000Z',
      answeredAt: null,
      answer: null,
      memory: null,
    });
    expect(String(reply?.call.args.content)).toContain('Hi Marco');
    const notify = items.find((i) => i.id === 'sample-02#1');
    expect(notify).toMatchObject({
      call: { action: 'Email Assistant: notify', args: {} },
      allowed: ['response', 'ignore'],
    });
    const meeting = items.find((i) => i.id === 'sample-04#1');
    expect(meeting?.call.args).toMatchObject({ preferred_day: '2026-11-26', start_time: '09:00' });
  });

  it('show prints one interrupt as a JSON object: pending, and answered with its answer and the memory version it made', async () => {
    const env = await inbox();
    const pending = await runTroupe(['inbox', 'show', 'sample-08#1', '--json'], env);
    expect(pending.code).toBe(0);
    const item = inboxItemJsonSchema.parse(JSON.parse(pending.stdout));
    expect(item).toMatchObject({
      id: 'sample-08#1',
      status: 'pending',
      call: { action: 'send_email_tool', args: { to: 'dana@acme.dev' } },
      email: { from: 'Dana <dana@acme.dev>', subject: 'Approval needed: Q3 budget' },
      answer: null,
    });
    expect(item.description).toContain('# Proposed: send_email_tool');

    expect((await runTroupe(['inbox', 'answer', 'sample-02#1', 'ignore'], env)).code).toBe(0);
    const answered = await runTroupe(['inbox', 'show', 'sample-02#1', '--json'], env);
    expect(answered.code).toBe(0);
    expect(inboxItemJsonSchema.parse(JSON.parse(answered.stdout))).toMatchObject({
      id: 'sample-02#1',
      status: 'answered',
      answer: { type: 'ignore' },
      answeredAt: '2026-11-25T09:00:00.000Z',
      memory: { namespace: 'email_assistant/triage_preferences', version: 2 },
      email: { from: 'Jordan <jordan@acme.dev>', messageId: '<sample-02@mail.example>' },
    });
    const list = inboxListJsonSchema.parse(
      JSON.parse((await runTroupe(['inbox', 'list', '--json'], env)).stdout),
    );
    expect(list.map((i) => i.id)).not.toContain('sample-02#1');

    const unknown = await runTroupe(['inbox', 'show', 'nope#1', '--json'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/^error TROUPE_INBOX_INVALID: /u);
  });

  it('logs go to stderr: with LOG_LEVEL=debug stdout is still only the JSON', async () => {
    const env = await inbox();
    const { stdout, stderr } = await exec('npx', ['tsx', 'src/cli/main.ts', 'inbox', 'list', '--json'], {
      env: { ...process.env, ...env, LOG_LEVEL: 'debug' },
    });
    expect(stderr).toContain('"msg":"store: SQLite at');
    expect(inboxListJsonSchema.parse(JSON.parse(stdout))).toHaveLength(6);
  });

  it('the schema refuses what is not the shape (an unknown field, a time that is not ISO)', async () => {
    const env = await inbox();
    const [item] = JSON.parse((await runTroupe(['inbox', 'list', '--json'], env)).stdout) as Record<
      string,
      unknown
    >[];
    expect(inboxItemJsonSchema.safeParse({ ...item, extra: 1 }).success).toBe(false);
    expect(inboxItemJsonSchema.safeParse({ ...item, createdAt: 1764061200000 }).success).toBe(false);
  });
});
