import type { EmailAssistant } from '../actors/email/emailAssistant.js';
import type { InboxItem } from '../actors/email/emailRecord.js';
import { allowedAnswers, type InboxItemJson } from '../email/inboxItemJson.js';

/** An interrupt as data (see `inboxItemJsonSchema`), with the headers of its email from the store. */
export async function inboxItemJson(assistant: EmailAssistant, item: InboxItem): Promise<InboxItemJson> {
  const email = (await assistant.record(item.emailId))?.email;
  const { action, args } = item.request.action_request;
  return {
    id: item.id,
    emailId: item.emailId,
    status: item.status,
    call: { action, args: { ...args } },
    allowed: allowedAnswers(item.request.config),
    email: email
      ? {
          from: email.from,
          to: email.to,
          cc: email.cc ?? null,
          subject: email.subject,
          date: email.date ?? null,
          messageId: email.messageId ?? null,
          threadId: email.threadId ?? null,
        }
      : null,
    description: item.request.description,
    createdAt: new Date(item.createdAt).toISOString(),
    answeredAt: item.answeredAt === undefined ? null : new Date(item.answeredAt).toISOString(),
    answer: item.answer ?? null,
    memory: item.memory ? { ...item.memory } : null,
  };
}

/**
 * JSON text for stdout: the same data, with the characters a terminal or a JavaScript parser could
 * take for something else (C1 controls, DEL, line and paragraph separators) written as `\u` escapes.
 */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2).replace(
    /[\u007f-\u009f\u2028\u2029]/gu,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )}\n`;
}
