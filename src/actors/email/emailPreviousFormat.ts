import { type HumanResponse, NOTIFY_ACTION } from '../../email/agentInbox.js';
import type { DocumentStore } from '../../ports/store.js';
import type { AnsweredInterrupt, EmailRecord, InboxItem } from './emailRecord.js';

/**
 * Where the build before this one kept answered interrupts; read only: a store it wrote keeps its
 * answered interrupts there, and an answer it stored but had not carried through when it stopped.
 */
export const ANSWERED_BEFORE = 'email-inbox-answered';
/** An answer the build before kept apart ({@link ANSWERED_BEFORE}), as the email's record keeps it. */
export function entryOf(item: InboxItem, record: EmailRecord): AnsweredInterrupt {
  const { action, args } = item.request.action_request;
  const answer = item.answer as HumanResponse;
  return {
    n: Number(item.id.slice(item.id.lastIndexOf('#') + 1)),
    action,
    ...(action === NOTIFY_ACTION ? {} : { args }),
    ...(answer.type !== 'ignore' ? { step: record.steps.length } : {}),
    answer,
    createdAt: item.createdAt,
    answeredAt: item.answeredAt ?? item.createdAt,
    ...(item.memory ? { memory: item.memory } : {}),
  };
}

/**
 * The answer the build before stored apart for an interrupt, if any. Only a record it wrote can
 * have one: this build writes `askedAt` with every interrupt it raises, and answers into the
 * record; a record not waiting says nothing either way, so it is looked up then too.
 */
export async function answeredBefore(
  documents: DocumentStore,
  record: EmailRecord | undefined,
  interruptId: string,
): Promise<InboxItem | undefined> {
  if (record?.interruptId === interruptId && record.askedAt !== undefined) return undefined;
  const stored = await documents.get<InboxItem>(ANSWERED_BEFORE, interruptId);
  return stored?.value.answer ? stored.value : undefined;
}
