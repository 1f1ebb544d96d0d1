import type { HumanResponse, InterruptRequest } from '../../email/agentInbox.js';

/** An interrupt as the Discord inbox reads it (the email assistant's `InboxItem` fits). */
export interface InboxEntry {
  id: string;
  emailId: string;
  request: InterruptRequest;
  status: 'pending' | 'answered';
  answer?: HumanResponse;
  /** The memory version the answer produced, if it updated one. */
  memory?: { namespace: string; version: number; summary: string };
}

/** What the Discord inbox reads of an email's record: its subject and the calls carried out. */
export interface InboxEmail {
  email: { subject: string; from: string };
  steps: readonly { call: { tool: string; args: unknown }; result?: unknown }[];
  state: { value: unknown };
  /** The interrupt the email waits on now, if any (a new one after feedback). */
  interruptId?: string | undefined;
}

/**
 * What the Discord inbox needs of the email assistant (`EmailAssistant` has all of it): adapters
 * do not import the runtime, so the CLI passes the assistant in.
 */
export interface InboxAssistant {
  /** The interrupts waiting for the human, oldest first. */
  pending(): Promise<InboxEntry[]>;
  /** One interrupt, pending or answered. */
  interrupt(interruptId: string): Promise<InboxEntry | undefined>;
  /**
   * Answers an interrupt (Agent Inbox shape); stored before it acts.
   *
   * @throws TroupeError `TROUPE_INBOX_INVALID` for an unknown or answered interrupt or an answer it
   *   does not allow.
   */
  answer(interruptId: string, answer: unknown): Promise<{ item: InboxEntry; record: InboxEmail }>;
  /** An email's record. */
  record(emailId: string): Promise<InboxEmail | undefined>;
}
