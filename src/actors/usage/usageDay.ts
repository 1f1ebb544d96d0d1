import type { UsageTotals } from '../../ports/usage.js';
import { addTotals, emptyTotals } from './usageTotals.js';

/** One UTC day's totals: of every call, and per avatar (what the day's caps compare with). */
export class UsageDay {
  readonly total: UsageTotals = emptyTotals();
  readonly byAvatar = new Map<string, UsageTotals>();

  /** Adds a call's (or a bucket's) totals, spent by `avatar` (undefined: the email assistant). */
  add(avatar: string | undefined, totals: Readonly<UsageTotals>): void {
    addTotals(this.total, totals);
    if (avatar !== undefined) this.addToAvatar(avatar, totals);
  }

  /** Adds another day's totals into this one. */
  addDay(other: UsageDay): void {
    addTotals(this.total, other.total);
    for (const [avatar, totals] of other.byAvatar) this.addToAvatar(avatar, totals);
  }

  private addToAvatar(avatar: string, totals: Readonly<UsageTotals>): void {
    const own = this.byAvatar.get(avatar);
    if (own) addTotals(own, totals);
    else this.byAvatar.set(avatar, addTotals(emptyTotals(), totals));
  }
}
