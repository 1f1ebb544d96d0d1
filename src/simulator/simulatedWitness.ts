import { type PresenceInterval, witnessedEntries } from '../actors/witnessLog.js';
import { DEFAULT_HISTORY_WINDOW, type HistoryEntry } from '../ports/history.js';

/** Messages kept: enough for any prompt window; older ones never reach a prompt. */
const MESSAGES_KEPT = 4 * DEFAULT_HISTORY_WINDOW;

/**
 * What each avatar of a simulated channel would see in its prompt: the runtime's witness rule
 * (messages said while it was present, its own, and the backfill at each arrival) over the same
 * history window a turn reads, kept in memory for one run.
 */
export class SimulatedWitness {
  private readonly messages: HistoryEntry[] = [];
  private readonly stays = new Map<string, PresenceInterval[]>();

  constructor(
    private readonly channelId: string,
    private readonly backfill: number,
    private readonly window = DEFAULT_HISTORY_WINDOW,
  ) {}

  /** A message said in the channel (a person's, a scripted line or a delivered turn). */
  said(messageId: string, at: number, author: HistoryEntry['author'], text: string): void {
    this.messages.push({ channelId: this.channelId, messageId, at, author, text });
    if (this.messages.length > MESSAGES_KEPT) this.messages.splice(0, this.messages.length - MESSAGES_KEPT);
  }

  /** The avatar is present from `at` (no change when it already is). */
  arrived(avatarId: string, at: number): void {
    const stays = this.stays.get(avatarId) ?? [];
    const last = stays.at(-1);
    if (last && last.to === undefined) return;
    // Messages of that very millisecond came before the arrival.
    const before = this.messages.filter((m) => m.at === at).map((m) => m.messageId);
    stays.push({ from: at, ...(before.length > 0 ? { before } : {}) });
    this.stays.set(avatarId, stays);
  }

  /** The avatar left at `at` (dismissed). */
  left(avatarId: string, at: number): void {
    const last = this.stays.get(avatarId)?.at(-1);
    if (!last || last.to !== undefined) return;
    last.to = at;
    const through = this.messages.filter((m) => m.at === at).map((m) => m.messageId);
    if (through.length > 0) last.through = through;
  }

  /** How many messages the avatar's prompt would hold now. */
  seenBy(avatarId: string): number {
    const recent = this.messages.slice(-this.window);
    return witnessedEntries(recent, avatarId, this.stays.get(avatarId) ?? [], this.backfill).length;
  }
}
