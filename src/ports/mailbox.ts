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

/**
 * Where the email assistant reads from and writes to: sends replies in their thread and closes
 * emails (label, mark as read) at the end of their lifecycle. Adapters: the local mailbox (in the
 * store), Gmail. A key already sent is not sent again (`duplicate: true`).
 */
export interface Mailbox {
  readonly id: string;
  sendReply(reply: EmailReply, idempotencyKey: string): Promise<{ messageId: string; duplicate?: boolean }>;
  /** Marks an email handled: labelled with its outcome and marked read. Idempotent. */
  close(emailId: string, outcome: string): Promise<void>;
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
