import { execFile } from 'node:child_process';
import { appendFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/adapters/store/sqlite/sqliteStore.js';
import { runEmail } from '../../src/cli/email.js';
import { EXIT_STORE_BUSY, EXIT_STORE_FULL } from '../../src/cli/storeErrors.js';
import { runTroupe } from '../support/runTroupe.js';

const exec = promisify(execFile);

/** `troupe` as a person runs it: a child process, its exit code and both streams whole. */
async function troupeProcess(args: string[], env: Record<string, string>) {
  try {
    const { stdout, stderr } = await exec('npx', ['tsx', 'src/cli/main.ts', ...args], {
      env: { ...process.env, NO_COLOR: '1', LOG_LEVEL: '', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const sample = (await readFile('examples/email/sample-mailbox.jsonl', 'utf8')).trim().split('\n');

/** A data directory and a mailbox file holding the first four sample emails. */
async function setUp() {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-store-errors-'));
  const mailbox = join(dir, 'mailbox.jsonl');
  await writeFile(mailbox, `${sample.slice(0, 4).join('\n')}\n`);
  const env = { TROUPE_DATA_DIR: dir, TROUPE_EMAIL_NOW: '2026-11-25T09:00:00Z' };
  return { dir, mailbox, env, db: join(dir, 'troupe.db') };
}

/** The ids of the emails the store holds a record of (each claimed by a complete write). */
function claimed(db: Database.Database): string[] {
  return (
    db.prepare("SELECT key FROM documents WHERE collection = 'email-lifecycle' ORDER BY key").all() as {
      key: string;
    }[]
  ).map((r) => r.key);
}

const firstFour = ['sample-01', 'sample-02', 'sample-03', 'sample-04'];
const lastFour = ['sample-05', 'sample-06', 'sample-07', 'sample-08'];

describe('troupe email on a store it cannot write', () => {
  it('troupe --help lists the exit codes, the store ones with their codes', async () => {
    const help = await runTroupe(['--help'], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(`${EXIT_STORE_FULL} the store's disk is full (TROUPE_STORE_FULL)`);
    expect(help.stdout).toContain(`${EXIT_STORE_BUSY} another process holds the store (TROUPE_STORE_BUSY)`);
  });

  it('another process holding the store: one TROUPE_STORE_BUSY line, exit 75, nothing claimed; the next run processes the emails', async () => {
    const { mailbox, env, db } = await setUp();
    const first = await troupeProcess(['email', '--mailbox', mailbox], env);
    expect(first.code).toBe(0);
    await appendFile(mailbox, `${sample.slice(4).join('\n')}\n`);

    // Another process (a connection of this one) holds the write lock past the busy timeout.
    const holder = new Database(db);
    holder.exec('BEGIN EXCLUSIVE');
    const busy = await troupeProcess(['email', '--mailbox', mailbox], {
      ...env,
      TROUPE_SQLITE_BUSY_TIMEOUT_MS: '100',
    });
    expect(busy.code).toBe(EXIT_STORE_BUSY);
    expect(busy.stderr).toMatch(
      new RegExp(
        `^error TROUPE_STORE_BUSY: The SQLite store at ${db.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')} is held by another process: [\\w.]+ waited 100 ms for its lock \\(SQLITE_BUSY: database is locked\\)\\. Another troupe process \\(or a tool with the file open\\) is writing to it: wait for it to finish or stop it, then run this again`,
        'u',
      ),
    );
    expect(busy.stderr.trim().split('\n')).toHaveLength(1);
    expect(busy.stderr).not.toMatch(/\n\s+at /u);
    for (const id of lastFour) expect(busy.stdout).not.toContain(`• ${id}`);
    expect(claimed(holder)).toEqual(firstFour);
    holder.exec('COMMIT');
    holder.close();

    const later = await troupeProcess(['email', '--mailbox', mailbox], env);
    expect(later.code).toBe(0);
    expect(later.stderr).toBe('');
    for (const id of lastFour) expect(later.stdout).toContain(`• ${id}`);
    for (const id of firstFour) expect(later.stdout).not.toContain(`• ${id}`);
    const raw = new Database(db, { readonly: true });
    expect(claimed(raw)).toEqual([...firstFour, ...lastFour]);
    raw.close();
  });

  it('a full disk: one TROUPE_STORE_FULL line, exit 74, nothing claimed; the next run processes the emails', async () => {
    const { dir, mailbox, env, db } = await setUp();
    const io = () => {
      const run = { stdout: '', stderr: '' };
      return {
        run,
        stdout: (t: string) => {
          run.stdout += t;
        },
        stderr: (t: string) => {
          run.stderr += t;
        },
      };
    };
    const quiet = { ...env, LOG_LEVEL: 'silent' };
    const first = io();
    expect(await runEmail({ mailboxFile: mailbox, env: quiet, ...first })).toBe(0);
    // Emails too long to fit in the pages the file has: each record needs new ones.
    const long = sample.slice(4).map((line) => {
      const email = JSON.parse(line) as Record<string, string>;
      const field = ['body', 'email_thread', 'content'].find((f) => f in email) as string;
      return JSON.stringify({ ...email, [field]: `${email[field]}\n\n${'Quoted thread. '.repeat(2_000)}` });
    });
    await appendFile(mailbox, `${long.join('\n')}\n`);

    // Real SQLite answering SQLITE_FULL: the file may not grow past its size (as on a full disk).
    const full = io();
    const code = await runEmail({
      mailboxFile: mailbox,
      env: quiet,
      storeOpeners: { sqlite: (options) => openSqliteStore({ ...options, maxSizeBytes: 1 }) },
      ...full,
    });
    expect(code).toBe(EXIT_STORE_FULL);
    expect(full.run.stderr).toMatch(
      /^error TROUPE_STORE_FULL: The SQLite store at .+troupe\.db is full \(SQLITE_FULL: database or disk is full during [\w.]+\): free disk space in /u,
    );
    expect(full.run.stderr).toContain(
      `free disk space in ${dir} (or point TROUPE_DATA_DIR at a disk with room)`,
    );
    expect(full.run.stderr.trim().split('\n')).toHaveLength(1);
    expect(full.run.stderr).not.toMatch(/\n\s+at /u);
    const raw = new Database(db, { readonly: true });
    expect(claimed(raw)).toEqual(firstFour);

    const later = io();
    expect(await runEmail({ mailboxFile: mailbox, env: quiet, ...later })).toBe(0);
    for (const id of lastFour) expect(later.run.stdout).toContain(`• ${id}`);
    expect(claimed(raw)).toEqual([...firstFour, ...lastFour]);
    raw.close();
  });

  it('troupe inbox answer on a busy store: the line and exit 75, the interrupt still waits; answered once the store is free', async () => {
    const { env, db } = await setUp();
    const quiet = { ...env, LOG_LEVEL: 'silent' };
    expect((await runTroupe(['email'], quiet)).code).toBe(0);
    const holder = new Database(db);
    holder.exec('BEGIN EXCLUSIVE');
    const busy = await runTroupe(['inbox', 'answer', 'sample-02#1', 'ignore'], {
      ...quiet,
      TROUPE_SQLITE_BUSY_TIMEOUT_MS: '20',
    });
    holder.exec('COMMIT');
    holder.close();
    expect(busy.code).toBe(EXIT_STORE_BUSY);
    expect(busy.stderr).toMatch(
      /^error TROUPE_STORE_BUSY: The SQLite store at .+ is held by another process/u,
    );
    expect(busy.stderr).not.toMatch(/\n\s+at /u);
    expect((await runTroupe(['inbox', 'list'], quiet)).stdout).toContain('sample-02#1');
    const answered = await runTroupe(['inbox', 'answer', 'sample-02#1', 'ignore'], quiet);
    expect(answered.code).toBe(0);
    expect(answered.stdout).toContain('now: done — notified');
  });
});
