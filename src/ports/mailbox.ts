/** A reply to send in an email's thread. */
export interface EmailReply {
  to: string;
  subject: string;
  content: string;
  /** The Message-ID answered (In-Reply-To), and the thread's References. */
  inReplyTo?: string;
  references: string[];
  threadId?: string;
}

/** What the assistant knows about an email when it closes it. */
export interface CloseContext {
  /**
   * True when a person has seen the email: they answered one of its interrupts, or a reply to it
   * went out. An email closed without a person (triaged ignore, a notify nobody answered) is not.
   */
  seenByPerson: boolean;
}

/**
 * Where the email assistant reads from and writes to: sends replies in their thread and closes
 * emails (label, and mark as read when a person saw them) at the end of their lifecycle.
 * Adapters: the local mailbox (in the store), Gmail. A key already sent is not sent again
 * (`duplicate: true`).
 */
export interface Mailbox {
  readonly id: string;
  sendReply(reply: EmailReply, idempotencyKey: string): Promise<{ messageId: string; duplicate?: boolean }>;
  /**
   * Marks an email handled: labelled with its outcome, and marked read as the adapter's policy
   * says for `context.seenByPerson` (without a context: nobody saw it). Idempotent.
   */
  close(emailId: string, outcome: string, context?: CloseContext): Promise<void>;
}

/** A meeting to put in the calendar and send invitations for. */
export interface MeetingRequest {
  attendees: string[];
  subject: string;
  durationMinutes: number;
  /** YYYY-MM-DD and HH:MM in `timeZone`. */
  day: string;
  startTime: string;
  timeZone: string;
}

/** Free time on a day, local times in the zone asked for. */
export interface DayAvailability {
  day: string;
  time_zone: string;
  free: { start: string; end: string }[];
}

/** The calendar the assistant checks and books. A key already booked is not booked again. */
export interface Calendar {
  availability(day: string, timeZone: string): Promise<DayAvailability>;
  invite(meeting: MeetingRequest, idempotencyKey: string): Promise<{ eventId: string; duplicate?: boolean }>;
}
