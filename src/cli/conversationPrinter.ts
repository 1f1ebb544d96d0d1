import type { Subscription } from 'rxjs';
import type { InspectionEvent } from '../actors/inspectionEvent.js';
import type { Runtime } from '../actors/runtimeOptions.js';
import type { TerminalTransport } from '../adapters/terminal/terminalTransport.js';
import { printFloorEffect } from './conversationEffects.js';
import { printInbound, printOutcome } from './conversationMessages.js';
import { createPrinterState, safe } from './conversationPrinterState.js';

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
  const state = createPrinterState(options);
  const onInspection = (event: InspectionEvent) => {
    if (event.type === 'floor.effect') printFloorEffect(state, event.effect);
    // The runtime publishes each outcome here before the floor hears of the delivery, so a
    // message is printed before what it caused (a thread concluding on a goodbye).
    else if (event.type === 'routing.outcome') printOutcome(state, event.outcome);
    else if (event.type === 'turn.generated' && state.verbose && event.seen !== undefined)
      // What the avatar knew: only messages said while it was present, its own, and the backfill.
      state.write(
        state.dim(`   ${state.who(event.avatarId)} saw ${event.seen} message${event.seen === 1 ? '' : 's'}`),
      );
    else if (event.type === 'turn.generation-failed') {
      state.stats.turns.failed += 1;
      state.failedTurns.add(event.turnId);
      state.write(`⚠️  ${state.who(event.avatarId)} could not write a reply: ${event.code}`);
    }
  };

  const subscriptions: Subscription[] = [
    runtime.inspection$.subscribe(onInspection),
    runtime.errors$.subscribe((error) => {
      state.lastError = error.message;
      state.write(`⛔ ${error.code}: ${safe(error.message)}`);
    }),
  ];
  const stopListening = transport.onMessage((message) => printInbound(state, message));
  return {
    stats: state.stats,
    write: state.write,
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
