import type { Subscription } from 'rxjs';
import type { InspectionEvent } from '../actors/inspectionEvent.js';
import type { Runtime } from '../actors/runtimeOptions.js';
import type { TerminalMessage, TerminalTransport } from '../adapters/terminal/terminalTransport.js';
import { formatDuration } from '../config/duration.js';
import { terminalText } from '../delivery/terminalText.js';
import type { FloorEffect, TurnClaim } from '../floor/floorTypes.js';
import type { RoutingOutcome } from '../ports/routingOutcome.js';
import { moodOf } from '../textRules/sentiment.js';

/** ANSI dim, only when colour is on. */
export const dimmer = (color: boolean) => (text: string) => (color ? `\u001b[2m${text}\u001b[22m` : text);
/** ANSI bold, only when colour is on. */
export const bolder = (color: boolean) => (text: string) => (color ? `\u001b[1m${text}\u001b[22m` : text);

/** What a printer is attached to and how it writes. */
export interface ConversationPrinterOptions {
  runtime: Runtime;
  transport: TerminalTransport;
  color: boolean;
  /** Writes one line (no trailing newline). */
  write: (line: string) => void;
  /** A time column before every line, e.g. `00:10.0` (printed dim, in brackets). */
  timestamp?: () => string;
  /** Also print claims and suppressed candidates. Default false. */
  verbose?: boolean;
  /** Mark avatar lines `(offline)`, as the simulator's transcript does. Default false. */
  offlineMark?: boolean;
}

/** Counts a printer keeps, for a closing summary. */
export interface ConversationStats {
  humanMessages: number;
  /** Avatar responses delivered (a response split into parts counts once). */
  avatarMessages: number;
  byRung: Record<string, number>;
  routing: { sent: number; failed: number; duplicate: number };
  fallbacks: number;
  turns: { claimed: number; released: number; failed: number };
  suppressed: number;
  threads: {
    id: string;
    mode: string;
    /** Participant names. */
    participants: string[];
    maxTurns: number;
    outcome?: string;
    detail?: string;
    turns?: number;
  }[];
}

/** A printer attached to a runtime; `detach` unsubscribes it. */
export interface ConversationPrinter {
  readonly stats: ConversationStats;
  /** Writes a line of the program's own (narration, notes) with the same time column. */
  write(line: string): void;
  detach(): void;
}

/** The short thread id people read: `th1` for `terminal:lobby:th1`. */
export function shortThreadId(threadId: string): string {
  return threadId.slice(threadId.lastIndexOf(':') + 1);
}

/**
 * Prints a runtime's conversation as it happens, one line per event people care about: messages
 * with their numbers (`[3] 🔭 Nova: …`), the rung and reason that chose each avatar turn (dim),
 * summons, dismissals, threads opening and ending, failures and fallbacks. Avatar lines come from
 * routing outcomes (so only what was really delivered is shown), taken from `inspection$` where
 * they come in order with the floor's effects; rungs come from the floor's `turn.claimed`
 * effects, matched by the outcome's turn id, and the text from the transport by message id.
 */
export function attachConversationPrinter(options: ConversationPrinterOptions): ConversationPrinter {
  const { runtime, transport } = options;
  const dim = dimmer(options.color);
  const verbose = options.verbose ?? false;
  const avatars = new Map(runtime.avatars.map((a) => [a.id, a]));
  // Everything below that came from outside (messages, names, errors, reasons quoting them) goes
  // through `safe`, so it cannot drive the terminal; the printer's own colours are added after.
  const safe = terminalText;
  const who = (id: string) => {
    const avatar = avatars.get(id);
    if (!avatar) return safe(id);
    return safe(avatar.emoji ? `${avatar.emoji} ${avatar.name}` : avatar.name);
  };
  const nameOf = (id: string) => safe(avatars.get(id)?.name ?? id);
  const write = (line: string) => {
    const time = options.timestamp?.();
    options.write(time !== undefined ? `${dim(`[${time}]`)} ${line}` : line);
  };
  const claims = new Map<string, TurnClaim>();
  let lastError: string | undefined;
  const failedTurns = new Set<string>();
  const stats: ConversationStats = {
    humanMessages: 0,
    avatarMessages: 0,
    byRung: {},
    routing: { sent: 0, failed: 0, duplicate: 0 },
    fallbacks: 0,
    turns: { claimed: 0, released: 0, failed: 0 },
    suppressed: 0,
    threads: [],
  };

  const replyNote = (replyTo: { messageId: string } | undefined) => {
    if (!replyTo) return '';
    const target = transport.lookup(replyTo.messageId);
    const author = target ? ` ${safe(target.author.name)}` : '';
    return `↩ [${target?.number ?? replyTo.messageId}]${author}`;
  };

  const onInbound = (message: TerminalMessage) => {
    if (message.source !== 'inbound') return;
    const reply = replyNote(message.replyTo);
    if (message.author.kind === 'human') {
      stats.humanMessages += 1;
      write(
        `[${message.number}] ${safe(message.author.name)}: ${safe(message.text)}${reply ? `  ${dim(`· ${reply}`)}` : ''}`,
      );
    } else {
      write(
        `[${message.number}] ${who(message.author.id)}: ${safe(message.text)}  ${dim('· scripted line')}`,
      );
    }
  };

  const onOutcome = (outcome: RoutingOutcome) => {
    if (outcome.duplicate) {
      stats.routing.duplicate += 1;
      return;
    }
    const avatarId = outcome.origin.avatarId;
    const speaker = avatarId !== undefined ? who(avatarId) : 'Troupe';
    if (!outcome.sent) {
      stats.routing.failed += 1;
      // Routing errors that were never attempted also come on errors$ (just before), already printed.
      if (outcome.error !== undefined && outcome.error.message === lastError) return;
      const error = outcome.error
        ? `${outcome.error.code} — ${safe(outcome.error.message)}`
        : 'unknown error';
      write(`⚠️  ${speaker}'s reply was not delivered: ${error}`);
      return;
    }
    stats.routing.sent += 1;
    stats.avatarMessages += 1;
    const claim = outcome.origin.turnId !== undefined ? claims.get(outcome.origin.turnId) : undefined;
    if (outcome.origin.turnId !== undefined) claims.delete(outcome.origin.turnId);
    if (claim) stats.byRung[claim.rung] = (stats.byRung[claim.rung] ?? 0) + 1;
    const kind = outcome.origin.kind;
    if (kind === 'fallback' || kind === 'error') stats.fallbacks += 1;
    const mark =
      kind === 'fallback'
        ? ' (fallback)'
        : kind === 'error'
          ? ' (error reply)'
          : options.offlineMark
            ? ' (offline)'
            : '';
    const warn = kind === 'error' ? '⚠️  ' : '';
    outcome.parts.forEach((part, i) => {
      const message = transport.lookup(part.messageId);
      const text = safe(message?.text ?? '');
      const number = message ? `[${message.number}]` : `[${part.messageId}]`;
      const notes: string[] = [];
      if (i === 0) {
        const reply = replyNote(message?.replyTo);
        if (reply) notes.push(reply);
        if (claim) {
          const thread = claim.threadId !== undefined ? ` · thread ${shortThreadId(claim.threadId)}` : '';
          const reason =
            claim.threadId !== undefined
              ? claim.reason.replaceAll(claim.threadId, shortThreadId(claim.threadId))
              : claim.reason;
          notes.push(`rung ${claim.rung} — ${safe(reason)}${thread}`);
        }
      }
      if (part.attempts > 1) notes.push(`sent after ${part.attempts} attempts`);
      const note = notes.length > 0 ? `  ${dim(`· ${notes.join(' · ')}`)}` : '';
      write(`${number} ${warn}${speaker}${mark}: ${text}${note}`);
    });
  };

  const onEffect = (effect: FloorEffect) => {
    switch (effect.type) {
      case 'turn.claimed':
        claims.set(effect.turn.turnId, effect.turn);
        stats.turns.claimed += 1;
        if (verbose) {
          const t = effect.turn;
          write(
            dim(
              `  · claim ${shortThreadId(t.turnId)}: ${nameOf(t.avatarId)} (${t.kind}, rung ${t.rung}, lane ${t.lane}) — ${safe(t.reason)}`,
            ),
          );
        }
        break;
      case 'turn.released':
        stats.turns.released += 1;
        // A failed generation was reported already, and its error reply still needs the claim.
        if (failedTurns.delete(effect.turnId)) break;
        claims.delete(effect.turnId);
        write(`↩️  ${who(effect.avatarId)} gave up a turn ${dim(`(${safe(effect.reason)})`)}`);
        break;
      case 'candidate.suppressed':
        stats.suppressed += 1;
        if (verbose) {
          const rung = effect.rung ? ` at rung ${effect.rung}` : '';
          write(
            dim(
              `  · suppressed ${nameOf(effect.avatarId)}${rung} on [${safe(effect.messageId)}]: ${effect.reason}${effect.detail ? ` — ${safe(effect.detail)}` : ''}`,
            ),
          );
        }
        break;
      case 'presence.summoned':
        write(`✨ ${who(effect.avatarId)} was summoned ${dim(`(${effect.turnsGranted} guaranteed turns)`)}`);
        break;
      case 'presence.dismissed':
        write(`👋 ${who(effect.avatarId)} was dismissed`);
        break;
      case 'thread.opened': {
        stats.threads.push({
          id: shortThreadId(effect.threadId),
          mode: effect.mode,
          participants: effect.participants.map(nameOf),
          maxTurns: effect.maxTurns,
        });
        const names = effect.participants.map(nameOf).join(', ');
        const expires = formatDuration(Math.max(0, effect.expiresAt - effect.at));
        write(
          `🧵 thread ${shortThreadId(effect.threadId)} opened ${dim(`(${effect.mode}: ${names}; up to ${effect.maxTurns} turns, ends within ${expires} unless active)`)}`,
        );
        break;
      }
      case 'thread.ended': {
        const id = shortThreadId(effect.threadId);
        const thread = stats.threads.find((t) => t.id === id && t.outcome === undefined);
        if (thread)
          Object.assign(thread, { outcome: effect.outcome, detail: effect.detail, turns: effect.turns });
        const mood = effect.sentiment !== undefined ? `, mood ${moodOf(effect.sentiment)}` : '';
        write(
          `🧵 thread ${id} ended: ${effect.outcome} — ${safe(effect.detail)} ${dim(`(${effect.turns} turns${mood})`)}`,
        );
        break;
      }
      case 'event.rejected':
        write(`⛔ ${effect.code}: ${safe(effect.message)}`);
        break;
      case 'turn.consumed':
        // The message is printed already; say what it cost the summoned avatar.
        if (effect.summonTurnsLeft !== undefined)
          write(
            dim(
              `  (${nameOf(effect.avatarId)}: ${effect.summonTurnsLeft} guaranteed turn${effect.summonTurnsLeft === 1 ? '' : 's'} left)`,
            ),
          );
        break;
    }
  };

  const onInspection = (event: InspectionEvent) => {
    if (event.type === 'floor.effect') onEffect(event.effect);
    // The runtime publishes each outcome here before the floor hears of the delivery, so a
    // message is printed before what it caused (a thread concluding on a goodbye).
    else if (event.type === 'routing.outcome') onOutcome(event.outcome);
    else if (event.type === 'turn.generation-failed') {
      stats.turns.failed += 1;
      failedTurns.add(event.turnId);
      write(`⚠️  ${who(event.avatarId)} could not write a reply: ${event.code}`);
    }
  };

  const subscriptions: Subscription[] = [
    runtime.inspection$.subscribe(onInspection),
    runtime.errors$.subscribe((error) => {
      lastError = error.message;
      write(`⛔ ${error.code}: ${safe(error.message)}`);
    }),
  ];
  const stopListening = transport.onMessage(onInbound);
  return {
    stats,
    write,
    detach() {
      stopListening();
      for (const s of subscriptions) s.unsubscribe();
    },
  };
}

/** Human-readable counts: `mention 1, greeting 1`, or `none`. */
export function formatCounts(record: Readonly<Record<string, number>>): string {
  return (
    Object.entries(record)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || 'none'
  );
}
