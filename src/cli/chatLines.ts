import { runChatCommand } from './chatCommands.js';
import { postTyped } from './chatPost.js';
import type { ChatRoom } from './chatRoom.js';

/**
 * Reads what the person types, one line at a time, until the input ends or `/quit`: `>n <text>`
 * replies to message [n], `/…` is a command, anything else is posted. After each line the runtime
 * settles (every answer it caused is printed) before the next is read.
 */
export async function readChatLines(room: ChatRoom): Promise<void> {
  for (;;) {
    const typed = await room.terminal.nextLine();
    if (typed === undefined) break;
    const line = typed.trim();
    if (line === '') continue;
    const shortcut = /^>\s*#?(\d+)(?:\s+([\s\S]*))?$/u.exec(line);
    if (shortcut) {
      const text = shortcut[2]?.trim() ?? '';
      if (text === '') room.oops('Usage: >n <text>, e.g. >3 thanks!');
      else postTyped(room, text, shortcut[1]);
    } else if (line.startsWith('/')) {
      if ((await runChatCommand(room, line)) === 'quit') break;
    } else {
      postTyped(room, line);
    }
    await room.runtime.whenIdle();
  }
}
