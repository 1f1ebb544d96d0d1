import type { TerminalTransport } from '../adapters/terminal/terminalTransport.js';
import { terminalText } from '../delivery/terminalText.js';
import type { TurnClaim } from '../floor/floorTypes.js';
import type { ConversationPrinterOptions, ConversationStats } from './conversationPrinter.js';
import { dimmer } from './conversationStyle.js';

/** What a conversation printer keeps between events, and how it names and writes. */
export interface ConversationPrinterState {
  transport: TerminalTransport;
  dim: (text: string) => string;
  verbose: boolean;
  offlineMark: boolean;
  /** The avatar's emoji and name, made safe for the terminal (its id when unknown). */
  who(avatarId: string): string;
  /** The avatar's name, made safe for the terminal (its id when unknown). */
  nameOf(avatarId: string): string;
  /** Writes a line with the time column, if any. */
  write(line: string): void;
  /** Turns claimed and not yet answered, by turn id: the rung of a delivered reply comes from here. */
  claims: Map<string, TurnClaim>;
  /** Turns whose generation failed: their release is reported already. */
  failedTurns: Set<string>;
  /** The last message on `errors$`, so a routing failure that came there too is printed once. */
  lastError: string | undefined;
  stats: ConversationStats;
}

/**
 * Everything below that came from outside (messages, names, errors, reasons quoting them) goes
 * through `safe`, so it cannot drive the terminal; the printer's own colours are added after.
 */
export const safe = terminalText;

/** A printer's state at the start, with no events seen. */
export function createPrinterState(options: ConversationPrinterOptions): ConversationPrinterState {
  const dim = dimmer(options.color);
  // Rebuilt when the runtime's cast changes (summoning creates avatars; a new list each time).
  let list = options.runtime.avatars;
  let byId = new Map(list.map((a) => [a.id, a]));
  const avatars = {
    get: (id: string) => {
      if (options.runtime.avatars !== list) {
        list = options.runtime.avatars;
        byId = new Map(list.map((a) => [a.id, a]));
      }
      return byId.get(id);
    },
  };
  return {
    transport: options.transport,
    dim,
    verbose: options.verbose ?? false,
    offlineMark: options.offlineMark ?? false,
    who(id) {
      const avatar = avatars.get(id);
      if (!avatar) return safe(id);
      return safe(avatar.emoji ? `${avatar.emoji} ${avatar.name}` : avatar.name);
    },
    nameOf: (id) => safe(avatars.get(id)?.name ?? id),
    write(line) {
      const time = options.timestamp?.();
      options.write(time !== undefined ? `${dim(`[${time}]`)} ${line}` : line);
    },
    claims: new Map(),
    failedTurns: new Set(),
    lastError: undefined,
    stats: {
      humanMessages: 0,
      avatarMessages: 0,
      byRung: {},
      routing: { sent: 0, failed: 0, duplicate: 0 },
      fallbacks: 0,
      turns: { claimed: 0, released: 0, failed: 0 },
      suppressed: 0,
      threads: [],
    },
  };
}

/** `↩ [3] Nova` for a reply to message [3] by Nova; empty when not a reply. */
export function replyNote(
  state: ConversationPrinterState,
  replyTo: { messageId: string } | undefined,
): string {
  if (!replyTo) return '';
  const target = state.transport.lookup(replyTo.messageId);
  const author = target ? ` ${safe(target.author.name)}` : '';
  return `↩ [${target?.number ?? replyTo.messageId}]${author}`;
}
