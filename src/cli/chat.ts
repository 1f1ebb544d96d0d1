import { serveStudio } from '../studio/serveStudio.js';
import type { StudioServer } from '../studio/studioServer.js';
import { printChatBanner } from './chatBanner.js';
import { readChatLines } from './chatLines.js';
import type { ChatOptions } from './chatOptions.js';
import type { ChatRoom } from './chatRoom.js';
import { type ChatRuntime, closeChatRuntime, openChatRuntime } from './chatRuntime.js';
import { readChatSettings } from './chatSettings.js';
import { createChatTerminal } from './chatTerminal.js';
import { attachConversationPrinter } from './conversationPrinter.js';
import { bolder, dimmer } from './conversationStyle.js';

export type { ChatOptions } from './chatOptions.js';

/** The id the person at the keyboard has in the runtime. */
export const TERMINAL_USER_ID = 'terminal-user';

/**
 * `troupe chat`: the person at the keyboard in `terminal:<channel>` with the avatars of a file,
 * on the real runtime and the system clock, with the model from the environment (or offline
 * scripted replies). Reads one line at a time, waits until the runtime is idle before the next,
 * and prints every message as it is delivered. Returns the exit code.
 */
export async function runChat(options: ChatOptions): Promise<number> {
  const settings = await readChatSettings(options);
  if (typeof settings === 'number') return settings;
  const opened = await openChatRuntime(options, settings);
  if (typeof opened === 'number') return opened;
  const { runtime, transport, projection } = opened;
  const dim = dimmer(options.color);
  const terminal = createChatTerminal({
    input: options.input,
    isTTY: options.isTTY,
    stdout: options.stdout,
    dim,
  });
  const printer = attachConversationPrinter({
    runtime,
    transport,
    color: options.color,
    verbose: options.verbose ?? false,
    write: terminal.out,
  });
  const room: ChatRoom = {
    runtime,
    transport,
    channel: { kind: 'terminal', id: options.channel },
    channelKey: `terminal:${options.channel}`,
    human: { id: TERMINAL_USER_ID, name: settings.name },
    get avatars() {
      return runtime.avatars;
    },
    config: options.config,
    studioStore: opened.studioStore,
    terminal,
    dim,
    say: (text) => terminal.out(text),
    oops: (text) => terminal.out(`✗ ${text}`),
  };
  await printChatBanner(room, {
    bold: bolder(options.color),
    avatarsLabel: options.avatarsLabel ?? options.avatarsFile,
    model: settings.model,
    store: opened.store,
    projection,
  });
  terminal.closeOnInterrupt();
  const studio = options.studio ? await serveChatStudio(room, opened, options) : undefined;
  try {
    await readChatLines(room);
  } finally {
    await studio?.close();
    terminal.close();
    await closeChatRuntime(opened);
    printer.detach();
    projection.detach();
  }
  terminal.erasePrompt(); // the prompt left behind by Ctrl+D
  room.say(dim(`Bye, ${room.human.name}.`));
  return 0;
}

/**
 * `--studio`: the studio served from this process over the chat's own runtime and projection (its
 * live actors, not a copy), on 127.0.0.1 with a fresh token; the URL is printed. The page posts
 * into the chat's channel only with `--playground`.
 */
async function serveChatStudio(
  room: ChatRoom,
  opened: ChatRuntime,
  options: ChatOptions,
): Promise<StudioServer> {
  const server = await serveStudio({
    runtime: opened.runtime,
    studioStore: opened.studioStore,
    projection: opened.projection,
    host: '127.0.0.1',
    port: 0,
    ...(options.playground
      ? { playground: { transport: opened.transport, channel: room.channel, person: room.human } }
      : {}),
  });
  room.say(`Troupe Studio: ${server.url}#token=${server.token}`);
  return server;
}
