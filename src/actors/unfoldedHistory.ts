import type { FloorEvent } from '../floor/floorTypes.js';
import type { HistoryEntry } from '../ports/history.js';

/**
 * The history lines of a channel that are not in the history store yet, because its turn ledger
 * holds them: on a store that keeps writes in order, a line is not written when it is said but
 * when the channel's ledger is folded into a snapshot, all the channel's lines together and in the
 * same commit as the fold. Until then the ledger entry of the line's floor event (the message, or
 * the delivered turn) is what makes it durable; a restore reads the lines back from the ledger
 * ({@link historyLinesOf}). Written one by one, each line cost a scattered index page in every
 * commit; written per channel, a fold's lines share their pages.
 *
 * Prompts read the stored lines followed by these. Bounded by the ledger: a fold (at most
 * `ledgerLimit` events after the last, and at passivation and stop) empties a channel's list.
 */
export class UnfoldedHistory {
  private readonly lines = new Map<string, HistoryEntry[]>();

  /** Adds a line said in a channel (its floor event goes into the ledger). */
  note(entry: HistoryEntry): void {
    const list = this.lines.get(entry.channelId);
    if (list) list.push(entry);
    else this.lines.set(entry.channelId, [entry]);
  }

  /** The channel's lines not stored yet, oldest first (not a copy: read, do not keep). */
  linesOf(channelId: string): readonly HistoryEntry[] {
    return this.lines.get(channelId) ?? [];
  }

  /** Takes the channel's lines for the fold that writes them. */
  take(channelId: string): HistoryEntry[] {
    const list = this.lines.get(channelId) ?? [];
    this.lines.delete(channelId);
    return list;
  }

  /** Puts back lines a failed fold took, before any said since. */
  putBack(channelId: string, taken: readonly HistoryEntry[]): void {
    if (taken.length === 0) return;
    this.lines.set(channelId, [...taken, ...(this.lines.get(channelId) ?? [])]);
  }

  /** Sets a restored channel's lines: those its ledger holds (see {@link historyLinesOf}). */
  restore(channelId: string, restored: readonly HistoryEntry[]): void {
    if (restored.length > 0) this.lines.set(channelId, [...restored]);
    else this.lines.delete(channelId);
  }

  /** Drops a channel's lines (its state is reloaded from the store, ledger included). */
  forget(channelId: string): void {
    this.lines.delete(channelId);
  }
}

/**
 * The history lines a channel's ledger events stand for, as the live channel wrote them: a line
 * per message and per delivered turn (the transport's first message id, the delivery's time). A
 * turn the floor no longer knew when it was delivered (released meanwhile) has no speaker: no line.
 */
export function historyLinesOf(
  channelId: string,
  events: readonly FloorEvent[],
  /** Per event, the avatar of a delivered turn as the floor knew it (undefined: it did not). */
  speakerAt: readonly (string | undefined)[],
  nameOf: (avatarId: string) => string,
): HistoryEntry[] {
  const out: HistoryEntry[] = [];
  events.forEach((event, i) => {
    if (event.type === 'message') {
      const { author } = event;
      out.push({
        channelId,
        messageId: event.messageId,
        at: event.at,
        author:
          author.kind === 'human'
            ? { kind: 'human', id: author.id, name: author.name }
            : { kind: 'avatar', id: author.id, name: nameOf(author.id) },
        text: event.text,
      });
    } else if (event.type === 'turn.delivered') {
      const avatarId = speakerAt[i];
      if (avatarId === undefined) return;
      out.push({
        channelId,
        messageId: event.messageId,
        at: event.at,
        author: { kind: 'avatar', id: avatarId, name: nameOf(avatarId) },
        text: event.text,
      });
    }
  });
  return out;
}
