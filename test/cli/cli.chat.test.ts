import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createUsageLedger } from '../../src/actors/usage/storedUsageLedger.js';
import { openSqliteStore } from '../../src/adapters/store/sqlite/sqliteStore.js';
import { chatInProcess as runChat } from '../support/cliInProcess.js';

/** The environment without any model configuration, so the chat is offline. */
function offlineEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(TROUPE_|OPENAI_|ANTHROPIC_|LOG_LEVEL$|FORCE_COLOR$)/u.test(key)) continue;
    env[key] = value;
  }
  // Each chat keeps its state in a fresh data directory, never in the repository.
  return {
    ...env,
    NO_COLOR: '1',
    TROUPE_DATA_DIR: mkdtempSync(join(tmpdir(), 'troupe-chat-data-')),
    ...extra,
  };
}

/** `troupe chat` as a child process, fed line by line through standard input. */
class ChatProcess {
  readonly child: ChildProcessWithoutNullStreams;
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;
  /** Called on every chunk of output and on exit. */
  private readonly waiting: (() => void)[] = [];

  constructor(args: string[], env: Record<string, string>) {
    this.child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'chat', ...args], {
      env,
      stdio: 'pipe',
    });
    const wake = () => {
      for (const w of this.waiting.splice(0)) w();
    };
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      wake();
    });
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
    void this.exited.then(wake);
  }

  /**
   * Waits on the output (no wall-clock deadline: a loaded machine is only slower; the test's
   * timeout guards a hang) until stdout from `from` on matches, and returns the match.
   */
  async waitFor(pattern: RegExp, from = 0): Promise<RegExpExecArray> {
    for (;;) {
      const match = pattern.exec(this.stdout.slice(from));
      if (match) return match;
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`no ${pattern} in stdout:\n${this.stdout}\nstderr:\n${this.stderr}`);
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  /** Types a line and waits for the output it causes to match `expect`. */
  async type(line: string, expected: RegExp): Promise<RegExpExecArray> {
    const from = this.stdout.length;
    this.child.stdin.write(`${line}\n`);
    return this.waitFor(expected, from);
  }
}

let running: ChatProcess | undefined;
afterEach(() => {
  if (running && running.child.exitCode === null) running.child.kill();
  running = undefined;
});

describe('troupe chat (child process, through standard input)', () => {
  it('greets, summons, answers mentions and replies by number, lists who is here, dismisses and quits', async () => {
    const chat = new ChatProcess(
      ['--avatars', 'examples/chat/avatars.yaml', '--name', 'Ada'],
      // Summoning an unknown name is refused here (creating one is tested on its own).
      offlineEnv({ SUMMON_FOLLOWUP_DELAY: '500ms', TROUPE_SUMMON_CREATES: 'false' }),
    );
    running = chat;
    await chat.waitFor(/\/help lists the commands/);
    expect(chat.stdout).toContain('Troupe chat — #lobby, you are Ada');
    expect(chat.stdout).toContain(
      'Model: OFFLINE — replies are canned lines from the offline scripted model',
    );
    expect(chat.stdout).toMatch(/OPENAI_API_KEY.*TROUPE_MODEL_BASE_URL.*TROUPE_MODEL_PROVIDER/);
    expect(chat.stdout).toContain('Here now: 🤖 Dewey.');

    // A greeting: numbered, and the resident answers it by name (the dim part is the rung).
    await chat.type(
      'hello Dewey',
      /\[2\] 🤖 Dewey: .+ {2}· ↩ \[1\] Ada · rung mention — Dewey was mentioned by Ada\n/,
    );
    expect(chat.stdout).toContain('[1] Ada: hello Dewey\n');

    // A summon: greeting now, the follow-up a moment later (real time), then the thread winds down.
    await chat.type('/summon rex', /🦖 Rex: .+· rung greeting — Rex was summoned by Ada · thread th1\n/);
    expect(chat.stdout).toContain('✨ 🦖 Rex was summoned (5 guaranteed turns)');
    await chat.waitFor(/🦖 Rex: .+· rung follow-up — Rex follows up on arriving/);
    await chat.waitFor(/🧵 thread th1 ended: concluded/);

    // A mention by name goes to Rex.
    const mention = await chat.type(
      'Rex, how is the sourdough today?',
      /\[(\d+)\] 🦖 Rex: .+· rung mention — Rex was mentioned by Ada\n/,
    );
    const rexMessage = mention[1];

    // Replying by number: the reply goes to the avatar who wrote that message.
    const reply = await chat.type(
      `>${rexMessage} and the croissants?`,
      /\[\d+\] 🦖 Rex: .+· rung reply — Ada replied to Rex's message\n/,
    );
    expect(reply[0]).toContain(`↩ [`);
    expect(chat.stdout).toMatch(
      new RegExp(`\\[\\d+\\] Ada: and the croissants\\? {2}· ↩ \\[${rexMessage}\\] Rex\\n`),
    );

    await chat.type(
      '/summon zorg',
      /✗ No avatar called "zorg"\. Avatars: 🤖 Dewey \(dewey\), 🔭 Nova \(nova\), 🦖 Rex \(rex\), 🌿 Wren \(wren\)/,
    );
    await chat.type('>999 hello?', /✗ There is no message \[999\] to reply to/);
    await chat.type(
      '/who',
      /Here in #lobby: 🤖 Dewey \(lives here\), 🦖 Rex \(summoned.*\); and you, Ada\.\nNot here: 🔭 Nova, 🌿 Wren/,
    );
    await chat.type('/dismiss rex', /👋 🦖 Rex was dismissed/);
    await chat.type('/dismiss Rex', /✗ Rex is not here\./);
    await chat.type('/quit', /Bye, Ada\./);
    expect(await chat.exited).toBe(0);
    expect(chat.stderr.replace(/npm warn.*\n/gu, '')).toBe('');
  });

  it('ends cleanly at the end of input', async () => {
    const chat = new ChatProcess([], offlineEnv());
    running = chat;
    chat.child.stdin.end('Hello Dewey\n');
    expect(await chat.exited).toBe(0);
    expect(chat.stdout).toContain('(examples/chat/avatars.yaml)');
    expect(chat.stdout).toMatch(/\[2\] 🤖 Dewey: /);
    expect(chat.stdout).toContain('Bye, Guest.');
  });
});

/** Runs `troupe chat` in-process on a memory store unless `given` names another. */
function chatInProcess(args: string[], lines: string[], given: Record<string, string | undefined> = {}) {
  return runChat(args, lines, { TROUPE_STORE: 'memory', ...given });
}

async function avatarsFile(text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-chat-'));
  const path = join(dir, 'avatars.yaml');
  await writeFile(path, text);
  return path;
}

describe('troupe chat (in process)', () => {
  it('Dewey answers lookups from the embedded demo ERP, numbers choices and takes a pick', async () => {
    const chat = await chatInProcess(
      [],
      ['Dewey, phone number for Parts for Truck Inc', 'Dewey, find vendor Parts', 'Dewey, 2', '/quit'],
      { NO_COLOR: '1' },
    );
    expect(chat.code).toBe(0);
    expect(chat.stdout).toContain('555-0100');
    expect(chat.stdout).toMatch(/1\. .*\n2\. .*\n3\. /u);
    expect(chat.stdout).toContain('Reply with a number, or the exact name.');
    const afterPick = chat.stdout.slice(chat.stdout.lastIndexOf('Dewey, 2'));
    expect(afterPick).toMatch(/Dewey: .*— /u);
  });

  it('keeps who is here and the conversation between sessions, in SQLite under TROUPE_DATA_DIR', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'troupe-chat-keep-'));
    const env = { TROUPE_STORE: '', TROUPE_DATA_DIR: dataDir, NO_COLOR: '1' };
    const first = await chatInProcess([], ['/summon Rex', '/quit'], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`State: SQLite at ${join(dataDir, 'troupe.db')}`);
    const second = await chatInProcess([], ['/who', '/quit'], env);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/Here in #lobby: .*Rex/u);
  });

  it("a reply another channel's session left unsettled waits for that channel, not this one", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'troupe-chat-unsettled-'));
    const env = { TROUPE_STORE: '', TROUPE_DATA_DIR: dataDir, NO_COLOR: '1' };
    // What a session of #one killed between recording its reply and sending it leaves behind.
    const store = await openSqliteStore({ path: join(dataDir, 'troupe.db') });
    await store.outbox.record(
      {
        idempotencyKey: 'terminal:one:e1:terminal:one:t9',
        channel: { kind: 'terminal', id: 'one' },
        speaker: { avatarId: 'rex', name: 'Rex' },
        attachments: [],
        preparedAt: 0,
        text: 'A reply meant for #one',
        origin: { turnId: 'terminal:one:t9', avatarId: 'rex', kind: 'answer' },
      },
      0,
    );
    await store.close();
    const two = await chatInProcess(['--channel', 'two'], ['/quit'], env);
    expect(two.code).toBe(0);
    expect(two.stdout).not.toContain('A reply meant for #one');
    const one = await chatInProcess(['--channel', 'one'], ['/quit'], env);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('A reply meant for #one');
  });

  it('/who shows each avatar’s usage today with its caps, and marks one that reached a cap with why', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'troupe-chat-usage-'));
    const store = await openSqliteStore({ path: join(dataDir, 'troupe.db') });
    const ledger = createUsageLedger({
      store: store.documents,
      prices: new Map(),
      scheduleFlush: () => undefined,
    });
    const call = {
      at: Date.now(),
      model: 'openai:gpt-test',
      scope: 'discord:1',
      purpose: 'turn',
      characters: 9,
    } as const;
    ledger.record({
      ...call,
      spender: { kind: 'avatar', id: 'ad1' },
      inputTokens: 25_000,
      outputTokens: 5_000,
    });
    ledger.record({ ...call, spender: { kind: 'avatar', id: 'bo2' }, inputTokens: 900, outputTokens: 100 });
    await ledger.flush();
    await store.close();
    const file = await avatarsFile(
      [
        'avatars:',
        '  - { id: ad1, name: Ada, residentIn: ["terminal:den"], caps: { maxTokensPerDay: 20000 } }',
        '  - { id: bo2, name: Bo, residentIn: ["terminal:den"] }',
        '  - { id: cy3, name: Cy }',
      ].join('\n'),
    );
    const env = {
      TROUPE_STORE: '',
      TROUPE_DATA_DIR: dataDir,
      NO_COLOR: '1',
      TROUPE_AVATAR_MAX_TOKENS_PER_DAY: '50000',
      TROUPE_MAX_TOKENS_PER_DAY: '1000000',
    };
    const { code, stdout } = await chatInProcess(
      ['--avatars', file, '--channel', 'den'],
      ['/who', '/quit'],
      env,
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(/Usage today \(UTC \d{4}-\d\d-\d\d; costs estimated from TROUPE_MODEL_PRICES\):/u);
    expect(stdout).toContain(
      '  Ada: 1 call, 30,000 tokens, — (1 call unpriced) today; cap 30,000 of 20,000 tokens today (150.0%) — reached — capped: cap-avatar-tokens (30,000 of 20,000 tokens today)',
    );
    expect(stdout).toContain(
      '  Bo: 1 call, 1,000 tokens, — (1 call unpriced) today; cap 1,000 of 50,000 tokens today (2.0%)\n',
    );
    expect(stdout).toContain(
      '  All calls: 2 calls, 31,000 tokens, — (2 calls unpriced) today; cap 31,000 of 1,000,000 tokens today (3.1%)',
    );
    // Cy is not here: no line of its own.
    expect(stdout).not.toMatch(/^ {2}Cy: /mu);
  });

  it('@id becomes a platform mention, even when the text does not name the avatar', async () => {
    const file = await avatarsFile(
      'avatars:\n  - { id: nv1, name: Nova, emoji: "🔭", residentIn: ["terminal:den"] }\n  - { id: rx2, name: Rex, residentIn: ["terminal:den"] }\n',
    );
    const { code, stdout } = await chatInProcess(
      ['--avatars', file, '--channel', 'den', '--name', 'Sam'],
      ['@nv1 look up!', '/who'],
    );
    expect(code).toBe(0);
    expect(stdout).toContain('Troupe chat — #den, you are Sam');
    expect(stdout).toMatch(/\[2\] 🔭 Nova: .+· rung mention — Nova was mentioned by Sam/);
    expect(stdout).toContain('Here in #den: 🔭 Nova (lives here), Rex (lives here); and you, Sam.');
  });

  it('summons by alias or name prefix, warns about absent avatars, and explains usage', async () => {
    const { stdout } = await chatInProcess(
      ['--name', 'Ada'],
      [
        'Wren, are the ferns ok?',
        '/summon botanist',
        '/summon no',
        '/summon',
        '/reply x',
        '/frobnicate',
        '/help',
        '/dismiss dewey',
      ],
    );
    expect(stdout).toContain('  (Wren is not here and cannot hear you: /summon Wren)');
    expect(stdout).toContain('✨ 🌿 Wren was summoned');
    expect(stdout).toContain('✨ 🔭 Nova was summoned'); // "no" is the start of one name only
    expect(stdout).toContain('✗ Usage: /summon <name>');
    expect(stdout).toContain('✗ Usage: /reply <n> <text>');
    expect(stdout).toContain('✗ Unknown command "/frobnicate". /help lists the commands.');
    expect(stdout).toContain('/reply <n> <text>   reply to message [n]');
    expect(stdout).toContain('👋 🤖 Dewey was dismissed');
  });

  it('a bad avatars file or channel exits 2 with the code and the problem', async () => {
    const file = await avatarsFile('avatars:\n  - id: nova\n');
    const bad = await chatInProcess(['--avatars', file], []);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain(`error TROUPE_AVATARS_INVALID: The avatars file ${file} is invalid:`);
    expect(bad.stderr).toContain('avatars[0].name (line 2): required');
    const missing = await chatInProcess(['--avatars', 'examples/none.yaml'], []);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      'error TROUPE_AVATARS_NOT_FOUND: No avatars file at examples/none.yaml.',
    );
    const channel = await chatInProcess(['--channel', 'two words'], []);
    expect(channel.code).toBe(2);
    expect(channel.stderr).toContain('TROUPE_CHANNEL_INVALID');
  });

  it('an avatars file that is a YAML alias bomb exits 2 with what to change, not a stack trace', async () => {
    const levels = ['a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (let i = 1; i < 9; i++) {
      const [prev, next] = [String.fromCharCode(96 + i), String.fromCharCode(97 + i)];
      levels.push(`${next}: &${next} [${Array(9).fill(`*${prev}`).join(', ')}]`);
    }
    const file = await avatarsFile(`${levels.join('\n')}\navatars: [{ id: x, name: X, topics: *i }]\n`);
    const bomb = await chatInProcess(['--avatars', file], []);
    expect(bomb.code).toBe(2);
    expect(bomb.stdout).toBe('');
    expect(bomb.stderr).toBe(
      `error TROUPE_AVATARS_INVALID: The avatars file ${file} is invalid:\n` +
        `  its aliases (*name) expand to too many values (yaml's limit is 100, a guard against "billion laughs" files); write the repeated values out instead of aliasing them\n`,
    );
  });

  it('errors quoting a file or the environment print no escape sequence from it', async () => {
    const raw = ['\u001b', '\u0007', '\u009b'];
    // An avatars file whose unknown field and bad value hold escapes (an OSC title, clear screen).
    const file = await avatarsFile(
      'avatars:\n  - { id: a, name: A, "\\e]0;pwned\\a\\e[2Jx": 1, voice: "\\e[31mred" }\n',
    );
    const badFile = await chatInProcess(['--avatars', file], [], { NO_COLOR: '1' });
    expect(badFile.code).toBe(2);
    expect(badFile.stderr).toContain('TROUPE_AVATARS_INVALID');
    expect(badFile.stderr).toContain('unknown field "x"');
    // The environment: an 8-bit CSI survives JSON quoting, so it must be removed on the way out.
    const badLevel = await chatInProcess([], [], { NO_COLOR: '1', LOG_LEVEL: '\u009b2Jdebug' });
    const badTtl = await chatInProcess([], [], { NO_COLOR: '1', CONVERSATION_THREAD_TTL: '\u009b2J' });
    for (const bad of [badLevel, badTtl]) {
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('TROUPE_CONFIG_INVALID');
    }
    // A file whose own name holds an escape: named in the banner and in errors.
    const dir = await mkdtemp(join(tmpdir(), 'troupe-chat-'));
    const named = join(dir, 'av\u001b[2J.yaml');
    await writeFile(named, 'avatars:\n  - { id: a, name: A }\n');
    const banner = await chatInProcess(['--avatars', named], ['/quit'], { NO_COLOR: '1' });
    expect(banner.code).toBe(0);
    expect(banner.stdout).toContain('Avatars (');
    await writeFile(named, 'avatars: []\n');
    const namedError = await chatInProcess(['--avatars', named], [], { NO_COLOR: '1' });
    expect(namedError.code).toBe(2);
    for (const run of [badFile, badLevel, badTtl, banner, namedError])
      for (const control of raw) expect(run.stdout + run.stderr).not.toContain(control);
  });

  it('a model configured from the environment is named in the banner; a bad one exits 2', async () => {
    const configured = await chatInProcess([], [], {
      TROUPE_MODEL_BASE_URL: 'http://127.0.0.1:9/v1',
      TROUPE_MODEL: 'llama3.2',
    });
    expect(configured.code).toBe(0);
    expect(configured.stdout).toContain('Model: openai-compatible llama3.2 at http://127.0.0.1:9/v1');
    expect(configured.stdout).not.toContain('OFFLINE');
    const bad = await chatInProcess([], [], { TROUPE_MODEL_PROVIDER: 'openai' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('TROUPE_CONFIG_INVALID');
    expect(bad.stderr).toContain('OPENAI_API_KEY');
  });

  it("writes each avatar's turns with the model its avatars file names; a bad one exits 2 naming the avatar", async () => {
    const { startFakeOpenAiServer } = await import('../support/fakeOpenAiServer.js');
    const fake = await startFakeOpenAiServer();
    try {
      fake.respondWith((body) => ({ text: `written by ${body.model}` }));
      const file = await avatarsFile(
        'avatars:\n' +
          '  - { id: nova, name: Nova, residentIn: ["terminal:den"], model: "openai-compatible:nova-model" }\n' +
          '  - { id: rex, name: Rex, residentIn: ["terminal:den"], model: cheap }\n' +
          '  - { id: ivy, name: Ivy, residentIn: ["terminal:den"] }\n',
      );
      const env = {
        NO_COLOR: '1',
        TROUPE_MODEL_BASE_URL: fake.baseUrl,
        TROUPE_MODEL: 'default-model',
        TROUPE_MODEL_RETRIES: '0',
        TROUPE_MODEL_PROFILES: JSON.stringify({
          cheap: { provider: 'openai-compatible', model: 'cheap-model', baseUrl: fake.baseUrl },
        }),
      };
      const chat = await chatInProcess(
        ['--avatars', file, '--channel', 'den', '--name', 'Sam'],
        ['Nova, hello', 'Rex, hello', 'Ivy, hello', '/quit'],
        env,
      );
      expect(chat.code, chat.stderr).toBe(0);
      expect(chat.stdout).toContain(
        'Own models: Nova openai-compatible:nova-model, Rex openai-compatible:cheap-model',
      );
      expect(fake.chatRequests().map((body) => body.model)).toEqual([
        'nova-model',
        'cheap-model',
        'default-model',
      ]);
      expect(chat.stdout).toContain('Nova: written by nova-model');
      expect(chat.stdout).toContain('Ivy: written by default-model');

      const unknown = await chatInProcess(['--avatars', file, '--channel', 'den'], ['/quit'], {
        ...env,
        TROUPE_MODEL_PROFILES: '',
      });
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain(
        'error TROUPE_AVATAR_MODEL_INVALID: Avatar Rex (rex) has model "cheap"',
      );
      expect(unknown.stdout).toBe('');
      expect(fake.chatRequests()).toHaveLength(3);
    } finally {
      await fake.close();
    }
  });

  it('prints no escape sequence that came from outside: typed text, a model reply, a --name', async () => {
    const { startFakeOpenAiServer } = await import('../support/fakeOpenAiServer.js');
    const fake = await startFakeOpenAiServer();
    try {
      fake.enqueue({ text: 'Hi \u001b]0;pwned\u0007there \u001b[2J\u001b[Hfriend\r[9] Nova: forged' });
      const chat = await chatInProcess(
        [],
        [
          'Dewey, \u001b[31mred\u001b[0m alert\u0007',
          '/\u001b[2Jnope',
          '/summon \u001b]0;x\u0007Zed',
          '/quit',
        ],
        {
          NO_COLOR: '1',
          TROUPE_MODEL_BASE_URL: fake.baseUrl,
          TROUPE_MODEL: 'fake',
          TROUPE_MODEL_RETRIES: '0',
        },
      );
      expect(chat.code).toBe(0);
      const printed = chat.stdout + chat.stderr;
      // NO_COLOR: the chat itself prints no escape either, so any would have come from outside.
      for (const control of ['\u001b', '\u0007', '\u009b']) expect(printed).not.toContain(control);
      expect(printed).toContain('Guest: Dewey, red alert␇');
      expect(printed).toMatch(/Dewey: Hi there friend␍\[9\] Nova: forged/u);
      expect(printed).toContain('Unknown command "/nope"');
      // The name is refused for its control character, and said without it.
      expect(printed).toContain('✗ That name has a control character (U+001B)');
      const badName = await chatInProcess(['--name', 'Ada\u001b[8m'], [], { NO_COLOR: '1' });
      expect(badName.code).toBe(2);
      expect(badName.stderr).toContain('TROUPE_NAME_INVALID');
      expect(badName.stderr).not.toContain('\u001b');
    } finally {
      await fake.close();
    }
  });
});
