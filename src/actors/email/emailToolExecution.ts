import type { ResponseToolCall } from '../../email/responseTools.js';
import type { Calendar, Mailbox } from '../../ports/mailbox.js';
import type { EmailRecord } from './emailRecord.js';

/** What the agent's calls act on. */
export interface ToolTargets {
  mailbox: Mailbox;
  calendar: Calendar;
}

/** One tool call against the mailbox or the calendar; its result is kept with the step. */
export async function carryOut(
  record: EmailRecord,
  call: ResponseToolCall,
  key: string,
  { mailbox, calendar }: ToolTargets,
): Promise<unknown> {
  let result: unknown;
  switch (call.tool) {
    case 'send_email_tool': {
      const { email } = record;
      result = await mailbox.sendReply(
        {
          to: call.args.to,
          subject: call.args.subject,
          content: call.args.content,
          ...(email.messageId ? { inReplyTo: email.messageId } : {}),
          references: email.messageId ? [...email.references, email.messageId] : email.references,
          ...(email.threadId ? { threadId: email.threadId } : {}),
        },
        key,
      );
      break;
    }
    case 'schedule_meeting_tool':
      result = await calendar.invite(
        {
          attendees: call.args.attendees,
          subject: call.args.subject,
          durationMinutes: call.args.duration_minutes,
          day: call.args.preferred_day,
          startTime: call.args.start_time,
          timeZone: call.args.time_zone,
        },
        key,
      );
      break;
    case 'check_calendar_availability_tool':
      result = await calendar.availability(call.args.day, call.args.time_zone);
      break;
    case 'Question':
      // Answered by the human in the review: the answer is the result.
      result = { answer: record.state.context.feedback.at(-1) ?? null };
      break;
    case 'Done':
      break;
  }
  return result;
}
