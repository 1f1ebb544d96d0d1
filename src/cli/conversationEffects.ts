import { formatDuration } from '../config/duration.js';
import type { FloorEffect } from '../floor/floorTypes.js';
import { moodOf } from '../textRules/sentiment.js';
import { type ConversationPrinterState, safe } from './conversationPrinterState.js';
import { shortThreadId } from './conversationStyle.js';

type EffectOf<T extends FloorEffect['type']> = Extract<FloorEffect, { type: T }>;

/**
 * A floor effect people care about: summons, dismissals, threads opening and ending, turns given
 * up, rejections and what a turn cost a summoned avatar; claims and suppressed candidates only
 * when verbose. Claims are kept for the reply that answers them.
 */
export function printFloorEffect(state: ConversationPrinterState, effect: FloorEffect): void {
  const { dim, who, write } = state;
  switch (effect.type) {
    case 'turn.claimed':
      printClaim(state, effect);
      break;
    case 'turn.released':
      state.stats.turns.released += 1;
      // A failed generation was reported already, and its error reply still needs the claim.
      if (state.failedTurns.delete(effect.turnId)) break;
      state.claims.delete(effect.turnId);
      write(`↩️  ${who(effect.avatarId)} gave up a turn ${dim(`(${safe(effect.reason)})`)}`);
      break;
    case 'candidate.suppressed':
      printSuppressed(state, effect);
      break;
    case 'presence.summoned':
      write(`✨ ${who(effect.avatarId)} was summoned ${dim(`(${effect.turnsGranted} guaranteed turns)`)}`);
      break;
    case 'presence.dismissed':
      write(`👋 ${who(effect.avatarId)} was dismissed`);
      break;
    case 'thread.opened':
      printThreadOpened(state, effect);
      break;
    case 'thread.ended':
      printThreadEnded(state, effect);
      break;
    case 'event.rejected':
      write(`⛔ ${effect.code}: ${safe(effect.message)}`);
      break;
    case 'cap.notice':
      // The notice itself is delivered as a message; verbose runs say which cap.
      if (state.verbose)
        write(
          dim(
            `  · ${state.nameOf(effect.avatarId)} reached a cap: ${effect.reason} (${safe(effect.detail)})`,
          ),
        );
      break;
    case 'turn.consumed':
      // The message is printed already; say what it cost the summoned avatar.
      if (effect.summonTurnsLeft !== undefined)
        write(
          dim(
            `  (${state.nameOf(effect.avatarId)}: ${effect.summonTurnsLeft} guaranteed turn${effect.summonTurnsLeft === 1 ? '' : 's'} left)`,
          ),
        );
      break;
  }
}

function printClaim(state: ConversationPrinterState, effect: EffectOf<'turn.claimed'>): void {
  state.claims.set(effect.turn.turnId, effect.turn);
  state.stats.turns.claimed += 1;
  if (!state.verbose) return;
  const t = effect.turn;
  state.write(
    state.dim(
      `  · claim ${shortThreadId(t.turnId)}: ${state.nameOf(t.avatarId)} (${t.kind}, rung ${t.rung}, lane ${t.lane}) — ${safe(t.reason)}`,
    ),
  );
}

function printSuppressed(state: ConversationPrinterState, effect: EffectOf<'candidate.suppressed'>): void {
  state.stats.suppressed += 1;
  if (!state.verbose) return;
  const rung = effect.rung ? ` at rung ${effect.rung}` : '';
  state.write(
    state.dim(
      `  · suppressed ${state.nameOf(effect.avatarId)}${rung} on [${safe(effect.messageId)}]: ${effect.reason}${effect.detail ? ` — ${safe(effect.detail)}` : ''}`,
    ),
  );
}

function printThreadOpened(state: ConversationPrinterState, effect: EffectOf<'thread.opened'>): void {
  const { nameOf } = state;
  state.stats.threads.push({
    id: shortThreadId(effect.threadId),
    mode: effect.mode,
    participants: effect.participants.map(nameOf),
    maxTurns: effect.maxTurns,
  });
  const names = effect.participants.map(nameOf).join(', ');
  const expires = formatDuration(Math.max(0, effect.expiresAt - effect.at));
  state.write(
    `🧵 thread ${shortThreadId(effect.threadId)} opened ${state.dim(`(${effect.mode}: ${names}; up to ${effect.maxTurns} turns, ends within ${expires} unless active)`)}`,
  );
}

function printThreadEnded(state: ConversationPrinterState, effect: EffectOf<'thread.ended'>): void {
  const id = shortThreadId(effect.threadId);
  const thread = state.stats.threads.find((t) => t.id === id && t.outcome === undefined);
  if (thread) Object.assign(thread, { outcome: effect.outcome, detail: effect.detail, turns: effect.turns });
  const mood = effect.sentiment !== undefined ? `, mood ${moodOf(effect.sentiment)}` : '';
  state.write(
    `🧵 thread ${id} ended: ${effect.outcome} — ${safe(effect.detail)} ${state.dim(`(${effect.turns} turns${mood})`)}`,
  );
}
