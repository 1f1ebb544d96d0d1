import { createInterface } from 'node:readline';
import type { AvatarDefinition } from '../actors/avatarDefinition.js';
import { nameProblem } from '../actors/avatarNames.js';
import { systemClock } from '../actors/clock.js';
import { modelFromEnv } from '../adapters/llm/modelFromEnv.js';
import { lazyEntityLookup } from '../adapters/sql/lazyEntityLookup.js';
import { openDefaultStore } from '../adapters/store/storeFromEnv.js';
import { type TerminalMessage, TerminalTransport } from '../adapters/terminal/terminalTransport.js';
import { postTerminalMessage } from '../app/terminalChannel.js';
import { ConfigError } from '../config/configError.js';
import type { CoordinationConfig } from '../config/coordinationConfig.js';
import { formatDuration } from '../config/duration.js';
import { replyFromEnv } from '../config/replySettings.js';
import { createRuntime } from '../createRuntime.js';
import { terminalText } from '../delivery/terminalText.js';
import type { FloorView } from '../floor/channelFloor.js';
import { createLogger } from '../logging/logger.js';
import { type LogLevel, logLevelFromEnv } from '../logging/logLevel.js';
import type { TroupeStore } from '../ports/store.js';
import { isTroupeError, TroupeError } from '../ports/troupeError.js';
import { attachStudioProjection } from '../studio/studioProjection.js';
import { createStudioStore } from '../studio/studioStore.js';
import { loadAvatarsFile } from './avatarsFile.js';
import { attachConversationPrinter, bolder, dimmer, shortThreadId } from './conversationPrinter.js';
import { fail } from './fail.js';

/** What `troupe chat` needs from the command line and its surroundings. */
export interface ChatOptions {
  /** The avatars file to read. */
  avatarsFile: string;
  /** How to show the file in the banner (the path as typed, or relative to the working directory). */
  avatarsLabel?: string;
  /** The person's display name. */
  name: string;
  /** The channel id; the channel is `terminal:<channel>`. */
  channel: string;
  /** Coordination settings (from the environment). */
  config: CoordinationConfig;
  /** Lines are read from here. */
  input: NodeJS.ReadableStream;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** Whether stdout is a terminal: with a terminal on stdin too, input gets line editing and a prompt. */
  isTTY: boolean;
  /** ANSI dim and bold. */
  color: boolean;
}

type PresenceView = FloorView['present'][number];
type ThreadView = FloorView['threads'][number];

/** The id the person at the keyboard has in the runtime. */
export const TERMINAL_USER_ID = 'terminal-user';

const CHANNEL_ID = /^[\w.-]{1,100}$/u;

const HELP = [
  'Type a message and press Enter; everyone in the channel hears it. Avatars answer when addressed',
  'by name (or @name), when you reply to them, or when the talk is about their topics.',
  '  /summon <name>      bring an avatar into the channel (it greets, then follows up)',
  '  /dismiss <name>     send an avatar away',
  '  /reply <n> <text>   reply to message [n]   (shortcut: >n <text>)',
  '  /who                who is here, who is not, and open threads',
  '  /help               this list',
  '  /quit               leave (Ctrl+D works too)',
];

/**
 * `troupe chat`: the person at the keyboard in `terminal:<channel>` with the avatars of a file,
 * on the real runtime and the system clock, with the model from the environment (or offline
 * scripted replies). Reads one line at a time, waits until the runtime is idle before the next,
 * and prints every message as it is delivered. Returns the exit code.
 */
export async function runChat(options: ChatOptions): Promise<number> {
  const { stdout, stderr, env } = options;
  const dim = dimmer(options.color);
  const bold = bolder(options.color);
  if (!CHANNEL_ID.test(options.channel)) {
    return fail(
      stderr,
      'TROUPE_CHANNEL_INVALID',
      `"${options.channel}" is not a channel id: use letters, digits, "_", "-" or ".".`,
    );
  }
  const name = options.name.trim();
  if (name === '' || name.length > 100) {
    return fail(stderr, 'TROUPE_NAME_INVALID', 'Your --name must have 1 to 100 characters.');
  }
  const nameIssue = nameProblem(name);
  if (nameIssue)
    return fail(
      stderr,
      'TROUPE_NAME_INVALID',
      `Your --name ${terminalText(JSON.stringify(name))} ${nameIssue}.`,
    );
  let avatars: AvatarDefinition[];
  try {
    avatars = await loadAvatarsFile(options.avatarsFile);
  } catch (error) {
    if (!isTroupeError(error)) throw error;
    return fail(stderr, error.code, error.message);
  }
  let level: LogLevel;
  try {
    level = logLevelFromEnv(env, 'warn');
  } catch (error) {
    if (!ConfigError.isInstance(error)) throw error;
    return fail(stderr, error.code, error.message);
  }
  const logger = createLogger({ level });
  let model: ReturnType<typeof modelFromEnv>;
  let replies: ReturnType<typeof replyFromEnv>;
  try {
    model = modelFromEnv(env, { logger });
    replies = replyFromEnv(env);
  } catch (error) {
    if (!ConfigError.isInstance(error)) throw error;
    return fail(stderr, error.code, error.message);
  }

  const channel = { kind: 'terminal', id: options.channel };
  const channelKey = `terminal:${options.channel}`;
  const human = { id: TERMINAL_USER_ID, name };
  let store: TroupeStore;
  try {
    store = await openDefaultStore(env, { logger });
  } catch (error) {
    if (TroupeError.isInstance(error)) return fail(stderr, error.code, error.message);
    throw error;
  }
  const lookupTool = lazyEntityLookup(env, { logger });
  // Ids stay unique across sessions: the store keeps the floor, which remembers message ids.
  const transport = new TerminalTransport({ idPrefix: `${Date.now().toString(36)}-` });
  const runtime = createRuntime({
    avatars,
    config: options.config,
    model: model.model,
    maxReplyChars: replies.maxReplyChars,
    transports: [transport],
    store,
    logger,
    lookup: { tool: lookupTool, composer: { env } },
  });

  // The studio's projection of this runtime: /who reads it, as the studio's page would.
  const studioStore = createStudioStore({
    now: Date.now(),
    avatarNames: new Map(avatars.map((a) => [a.id, a.name])),
  });
  const projection = attachStudioProjection({ store: studioStore, runtime, clock: systemClock, logger });

  const input = options.input;
  const interactive = options.isTTY && (input as { isTTY?: boolean }).isTTY === true;
  const rl = createInterface({
    input,
    ...(interactive ? { output: process.stdout, terminal: true } : { terminal: false }),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  rl.setPrompt(dim('> '));
  // Lines typed while an answer is still on its way wait in the iterator's buffer.
  const lines = rl[Symbol.asyncIterator]();
  let prompting = false;
  const out = (line: string) => {
    // An avatar speaking while the person types (a follow-up): print above the prompt, then redraw it.
    if (interactive && prompting) {
      stdout(`\r\u001b[2K${line}\n`);
      rl.prompt(true);
    } else {
      stdout(`${line}\n`);
    }
  };
  const printer = attachConversationPrinter({ runtime, transport, color: options.color, write: out });
  const say = (text: string) => out(text);
  const oops = (text: string) => out(`✗ ${text}`);

  const who = (a: AvatarDefinition) => (a.emoji ? `${a.emoji} ${a.name}` : a.name);
  const resident = (a: AvatarDefinition) => a.residentIn.includes(channelKey);
  const presentIds = (): string[] => {
    const view = runtime.view(channel);
    return view ? view.present.map((p) => p.id) : avatars.filter(resident).map((a) => a.id);
  };
  const find = (raw: string): AvatarDefinition | undefined => {
    const query = raw.trim().replace(/^@/u, '').toLocaleLowerCase('en');
    if (query === '') return undefined;
    const labels = (a: AvatarDefinition) =>
      [a.id, a.name, ...(a.aliases ?? [])].map((l) => l.toLocaleLowerCase('en'));
    const exact = avatars.find((a) => labels(a).includes(query));
    if (exact) return exact;
    const prefixed = avatars.filter((a) => labels(a).some((l) => l.startsWith(query)));
    return prefixed.length === 1 ? prefixed[0] : undefined;
  };
  const unknown = (raw: string) =>
    oops(
      `No avatar called "${terminalText(raw)}". Avatars: ${avatars.map((a) => `${who(a)} (${a.id})`).join(', ')}. Use a name, an alias or an id.`,
    );

  /** Whether the text names the avatar (name or alias as a whole word), as the floor would. */
  const named = (a: AvatarDefinition, text: string) =>
    [a.name, ...(a.aliases ?? [])].some((label) =>
      new RegExp(
        `(?<![\\p{L}\\p{N}_])${label.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')}(?![\\p{L}\\p{N}_])`,
        'iu',
      ).test(text),
    );

  const post = (text: string, replyToNumber?: string) => {
    let target: TerminalMessage | undefined;
    if (replyToNumber !== undefined) {
      target = transport.lookup(replyToNumber);
      if (!target) {
        const kept = transport.recent();
        const range =
          kept.length > 0 ? `messages [${kept[0]?.number}] to [${kept.at(-1)?.number}]` : 'no messages yet';
        oops(`There is no message [${replyToNumber}] to reply to (${range}).`);
        return;
      }
    }
    if (interactive) stdout('\u001b[1A\u001b[2K'); // the typed line is reprinted with its number
    const here = presentIds();
    // A rejection (too long, runtime stopping) is reported on errors$, which the printer shows.
    const { mentions } = postTerminalMessage(runtime, transport, {
      channel,
      author: human,
      text,
      ...(target ? { replyTo: target } : {}),
    });
    const absent = avatars.filter((a) => !here.includes(a.id) && (mentions.includes(a.id) || named(a, text)));
    for (const a of absent) say(dim(`  (${a.name} is not here and cannot hear you: /summon ${a.name})`));
  };

  /** Who is here, their threads and turns: the studio store's projection, as `troupe studio` shows it. */
  const showWho = () => {
    const studio = studioStore.getSnapshot().context;
    const mine = studio.actors.filter((a) => a.channelKey === channelKey && a.status === 'active');
    const presences = new Map(
      mine
        .filter((a) => a.kind === 'presence')
        .map((a) => [String(a.context.id), a.context as Partial<PresenceView>]),
    );
    const threads = mine.filter((a) => a.kind === 'thread').map((a) => a.context as Partial<ThreadView>);
    const present = avatars.filter((a) => presences.has(a.id));
    const away = avatars.filter((a) => !presences.has(a.id));
    const describe = (a: AvatarDefinition) => {
      const state = presences.get(a.id);
      const notes: string[] = [];
      if (resident(a)) notes.push('lives here');
      else if (state) notes.push('summoned');
      const inThreads = threads.filter((t) => t.participants?.includes(a.id));
      if (inThreads.length > 0)
        notes.push(`in ${inThreads.map((t) => `thread ${String(t.id).split(':').pop()}`).join(', ')}`);
      const now = Date.now();
      const until = state?.conversingUntil ?? 0;
      const conversing = state !== undefined && until > now;
      if (conversing) notes.push(`conversing for ${formatDuration(until - now)} more`);
      // A summon's guaranteed turns, while its conversation lasts.
      const turns = state?.summonTurns ?? 0;
      if (conversing && turns > 0) notes.push(`${turns} guaranteed turn${turns === 1 ? '' : 's'} left`);
      if (state?.turn !== undefined && state.turn !== 'ready') notes.push('speaking');
      return `${who(a)}${notes.length > 0 ? ` ${dim(`(${notes.join(', ')})`)}` : ''}`;
    };
    say(
      `Here in #${channel.id}: ${present.length > 0 ? present.map(describe).join(', ') : 'no avatars'}; and you, ${human.name}.`,
    );
    if (away.length > 0) say(`Not here: ${away.map(who).join(', ')} ${dim('— /summon <name>')}`);
    for (const t of threads) {
      const names = (t.participants ?? [])
        .map((id) => avatars.find((a) => a.id === id)?.name ?? id)
        .join(', ');
      const left = formatDuration(Math.max(0, (t.expiresAt ?? 0) - Date.now()));
      say(
        `🧵 thread ${shortThreadId(String(t.id))} (${t.mode}: ${names}) ${dim(`${t.turnCount}/${t.maxTurns} turns, ends within ${left} unless active`)}`,
      );
    }
  };

  const command = (line: string): 'quit' | undefined => {
    const [head = ''] = line.slice(1).split(/\s+/u);
    const rest = line.slice(1 + head.length).trim();
    switch (head.toLowerCase()) {
      case 'summon': {
        if (!rest) return void oops('Usage: /summon <name>');
        const avatar = find(rest);
        if (!avatar) return void unknown(rest);
        if (presentIds().includes(avatar.id) && resident(avatar)) {
          return void oops(`${avatar.name} lives here already; just talk to ${avatar.name}.`);
        }
        runtime.send({ type: 'avatar.summon', channel, avatarId: avatar.id, by: human });
        return undefined;
      }
      case 'dismiss': {
        if (!rest) return void oops('Usage: /dismiss <name>');
        const avatar = find(rest);
        if (!avatar) return void unknown(rest);
        if (!presentIds().includes(avatar.id)) return void oops(`${avatar.name} is not here.`);
        runtime.send({ type: 'avatar.dismiss', channel, avatarId: avatar.id });
        return undefined;
      }
      case 'reply':
      case 'r': {
        const match = /^#?(\d+)\s+([\s\S]+)$/u.exec(rest);
        if (!match?.[1] || !match[2]) return void oops('Usage: /reply <n> <text>  (or >n <text>)');
        post(match[2].trim(), match[1]);
        return undefined;
      }
      case 'who':
        showWho();
        return undefined;
      case 'help':
      case '?':
        for (const l of HELP) say(l);
        return undefined;
      case 'quit':
      case 'exit':
        return 'quit';
      default:
        oops(`Unknown command "/${terminalText(head)}". /help lists the commands.`);
        return undefined;
    }
  };

  // The banner.
  const residents = avatars.filter(resident);
  say(bold(`Troupe chat — #${channel.id}, you are ${human.name}`));
  say(
    `Avatars ${dim(`(${terminalText(options.avatarsLabel ?? options.avatarsFile)})`)}: ${avatars.map(who).join(', ')}`,
  );
  say(
    residents.length > 0
      ? `Here now: ${residents.map(who).join(', ')}. Bring the others in with /summon <name>.`
      : 'Nobody is here yet: bring an avatar in with /summon <name>.',
  );
  if (model.model.offline) {
    say('Model: OFFLINE — replies are canned lines from the offline scripted model, not an AI.');
    say(
      dim(
        '  For real replies set OPENAI_API_KEY (or ANTHROPIC_API_KEY), or point TROUPE_MODEL_BASE_URL and TROUPE_MODEL ' +
          'at an OpenAI-compatible server; TROUPE_MODEL_PROVIDER picks one explicitly.',
      ),
    );
  } else {
    say(`Model: ${terminalText(model.description)}`);
  }
  // Load the channel now: who is here may have been kept from an earlier session.
  const opened = await projection.open(channel);
  const kept = avatars.filter((a) => !resident(a) && opened.present.some((p) => p.id === a.id));
  if (kept.length > 0) say(`Still here from last time: ${kept.map(who).join(', ')}.`);
  const where = (store as { path?: string }).path;
  say(
    store.kind === 'memory'
      ? dim('State: in memory only (nothing is kept after you quit).')
      : dim(
          `State: ${store.kind === 'sqlite' ? `SQLite at ${where}` : 'MongoDB'} — who is here, threads and history are kept between sessions (TROUPE_STORE=memory keeps nothing).`,
        ),
  );
  say(`Mention an avatar by name or @name; reply to message [n] with >n <text>. /help lists the commands.`);
  say('');

  const prompt = () => {
    if (!interactive) return;
    prompting = true;
    rl.prompt();
  };
  rl.on('SIGINT', () => rl.close());
  try {
    prompt();
    for (;;) {
      const next = await lines.next();
      prompting = false;
      if (next.done) break;
      const line = next.value.trim();
      if (line === '') {
        prompt();
        continue;
      }
      const shortcut = /^>\s*#?(\d+)(?:\s+([\s\S]*))?$/u.exec(line);
      if (shortcut) {
        const text = shortcut[2]?.trim() ?? '';
        if (text === '') oops('Usage: >n <text>, e.g. >3 thanks!');
        else post(text, shortcut[1]);
      } else if (line.startsWith('/')) {
        if (command(line) === 'quit') break;
      } else {
        post(line);
      }
      await runtime.whenIdle();
      prompt();
    }
  } finally {
    prompting = false;
    rl.close();
    // Whatever is on its way is delivered; pending timers (a follow-up not due yet) are dropped.
    await runtime.whenIdle();
    await runtime.stop();
    await store.close();
    await lookupTool.close();
    printer.detach();
    projection.detach();
  }
  if (interactive) stdout('\r\u001b[2K'); // the prompt left behind by Ctrl+D
  say(dim(`Bye, ${human.name}.`));
  return 0;
}
