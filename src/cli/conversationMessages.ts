import type { TerminalMessage } from '../adapters/terminal/terminalTransport.js';
import type { TurnClaim } from '../floor/floorTypes.js';
import type { RoutingOutcome } from '../ports/routingOutcome.js';
import { type ConversationPrinterState, replyNote, safe } from './conversationPrinterState.js';
import { shortThreadId } from './conversationStyle.js';

/** A message that came into the channel: a person's (with the message it replies to), or a scripted line. */
export function printInbound(state: ConversationPrinterState, message: TerminalMessage): void {
  if (message.source !== 'inbound') return;
  const { dim, stats, write } = state;
  const reply = replyNote(state, message.replyTo);
  if (message.author.kind === 'human') {
    stats.humanMessages += 1;
    write(
      `[${message.number}] ${safe(message.author.name)}: ${safe(message.text)}${reply ? `  ${dim(`· ${reply}`)}` : ''}`,
    );
  } else {
    write(
      `[${message.number}] ${state.who(message.author.id)}: ${safe(message.text)}  ${dim('· scripted line')}`,
    );
  }
}

/**
 * A routing outcome: a reply delivered (each part with its number, the first with the rung that
 * chose the turn), or not delivered (with why). Duplicates are only counted.
 */
export function printOutcome(state: ConversationPrinterState, outcome: RoutingOutcome): void {
  const { stats } = state;
  if (outcome.duplicate) {
    stats.routing.duplicate += 1;
    return;
  }
  const avatarId = outcome.origin.avatarId;
  const speaker = avatarId !== undefined ? state.who(avatarId) : 'Troupe';
  if (!outcome.sent) {
    stats.routing.failed += 1;
    // Routing errors that were never attempted also come on errors$ (just before), already printed.
    if (outcome.error !== undefined && outcome.error.message === state.lastError) return;
    const error = outcome.error ? `${outcome.error.code} — ${safe(outcome.error.message)}` : 'unknown error';
    state.write(`⚠️  ${speaker}'s reply was not delivered: ${error}`);
    return;
  }
  stats.routing.sent += 1;
  stats.avatarMessages += 1;
  const claim = outcome.origin.turnId !== undefined ? state.claims.get(outcome.origin.turnId) : undefined;
  if (outcome.origin.turnId !== undefined) state.claims.delete(outcome.origin.turnId);
  if (claim) stats.byRung[claim.rung] = (stats.byRung[claim.rung] ?? 0) + 1;
  const kind = outcome.origin.kind;
  if (kind === 'fallback' || kind === 'error') stats.fallbacks += 1;
  printDeliveredParts(state, outcome, speaker, claim);
}

/** One line per part of a delivered reply, marked as a fallback, an error reply or offline. */
function printDeliveredParts(
  state: ConversationPrinterState,
  outcome: RoutingOutcome,
  speaker: string,
  claim: TurnClaim | undefined,
): void {
  const kind = outcome.origin.kind;
  const mark =
    kind === 'fallback'
      ? ' (fallback)'
      : kind === 'error'
        ? ' (error reply)'
        : state.offlineMark
          ? ' (offline)'
          : '';
  const warn = kind === 'error' ? '⚠️  ' : '';
  outcome.parts.forEach((part, i) => {
    const message = state.transport.lookup(part.messageId);
    const text = safe(message?.text ?? '');
    const number = message ? `[${message.number}]` : `[${part.messageId}]`;
    const notes: string[] = [];
    if (i === 0) {
      const reply = replyNote(state, message?.replyTo);
      if (reply) notes.push(reply);
      if (claim) notes.push(rungNote(claim));
    }
    if (part.attempts > 1) notes.push(`sent after ${part.attempts} attempts`);
    const note = notes.length > 0 ? `  ${state.dim(`· ${notes.join(' · ')}`)}` : '';
    state.write(`${number} ${warn}${speaker}${mark}: ${text}${note}`);
  });
}

/** `rung thread — <reason> · thread th1`: why the turn was taken, with short thread ids. */
function rungNote(claim: TurnClaim): string {
  const thread = claim.threadId !== undefined ? ` · thread ${shortThreadId(claim.threadId)}` : '';
  const reason =
    claim.threadId !== undefined
      ? claim.reason.replaceAll(claim.threadId, shortThreadId(claim.threadId))
      : claim.reason;
  return `rung ${claim.rung} — ${safe(reason)}${thread}`;
}
