import type { gmail_v1 } from 'googleapis/build/src/apis/gmail/v1.js';
import type { GoogleCall } from './googleRetry.js';

/** The label of an email triaged notify, added when its interrupt is raised and kept when closed. */
export const NOTIFY_LABEL = 'Troupe/Notify';

const OUTCOME_LABELS: Readonly<Record<string, string>> = {
  ignored: 'Troupe/Ignored',
  notified: NOTIFY_LABEL,
  answered: 'Troupe/Answered',
};

/**
 * The Gmail label of an email closed with `outcome`: `Troupe/Ignored`, `Troupe/Notify` (a notify
 * the person dismissed), `Troupe/Answered`; any other outcome `Troupe/<Outcome>`.
 */
export function outcomeLabel(outcome: string): string {
  return OUTCOME_LABELS[outcome] ?? `Troupe/${outcome.charAt(0).toUpperCase()}${outcome.slice(1)}`;
}

/**
 * Label ids by name for one Gmail account: found in the account's labels, created once if
 * missing (two processes creating the same label at once: the loser's 409 finds the winner's).
 */
export class GmailLabels {
  private readonly ids = new Map<string, Promise<string>>();

  constructor(
    private readonly gmail: gmail_v1.Gmail,
    private readonly call: GoogleCall,
  ) {}

  /** The id of the label `name`, created if the account has none by that name (any case). */
  idFor(name: string): Promise<string> {
    const key = name.toLowerCase();
    let id = this.ids.get(key);
    if (!id) {
      id = this.resolve(name);
      // A failure is not remembered: the next close asks again.
      id.catch(() => this.ids.delete(key));
      this.ids.set(key, id);
    }
    return id;
  }

  private async resolve(name: string): Promise<string> {
    const existing = await this.find(name);
    if (existing) return existing;
    try {
      const created = await this.call(`create the label ${name}`, () =>
        this.gmail.users.labels.create({
          userId: 'me',
          requestBody: { name, labelListVisibility: 'labelShow', messageListVisibility: 'show' },
        }),
      );
      if (created.data.id) return created.data.id;
    } catch (error) {
      // 409: it exists now (made elsewhere meanwhile); anything else is the caller's to report.
      const found = await this.find(name);
      if (found) return found;
      throw error;
    }
    const found = await this.find(name);
    if (!found) throw new Error(`Gmail created the label ${name} without an id`);
    return found;
  }

  private async find(name: string): Promise<string | undefined> {
    const listed = await this.call('list the labels', () => this.gmail.users.labels.list({ userId: 'me' }));
    const label = (listed.data.labels ?? []).find((l) => l.name?.toLowerCase() === name.toLowerCase());
    return label?.id ?? undefined;
  }
}
