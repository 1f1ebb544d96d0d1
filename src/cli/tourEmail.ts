import { readFile } from 'node:fs/promises';
import { SimulatedClock } from '../actors/clock.js';
import type { EmailRecord } from '../actors/email/emailRecord.js';
import { createMemoryStore } from '../adapters/store/memory/memoryStore.js';
import { createLocalEmailAssistant } from '../app/localEmailAssistant.js';
import { memoryNamespaces, PREFERENCES_KEY } from '../email/triagePreferences.js';
import { isTroupeError } from '../ports/troupeError.js';
import { bolder, dimmer } from './conversationStyle.js';

/** How the tour's email act is played. */
export interface EmailActOptions {
  /** The sample mailbox (one email per line); the act takes its first four. */
  mailboxFile: string;
  /** Writes one line (no trailing newline). */
  write: (line: string) => void;
  color: boolean;
}

/**
 * The feedback the tour gives the notify interrupt: the offline agent shapes the draft by its
 * rules (a yes, the day named), never pasting the words in.
 */
const FEEDBACK = 'Great news! Say yes to a demo on Thursday.';

/**
 * The tour's email act: four emails of the sample mailbox through the real `EmailAssistant`
 * (offline router and agent, a memory store, the local mailbox, a pinned clock, so it prints the
 * same everywhere): each triage decision, the notify interrupt answered with feedback, the draft
 * that feedback brings reviewed and sent in its thread, and the line the triage preferences
 * learned.
 */
export async function playEmailAct(options: EmailActOptions): Promise<void> {
  const bold = bolder(options.color);
  const dim = dimmer(options.color);
  const out = options.write;
  const store = createMemoryStore();
  const clock = new SimulatedClock(Date.parse('2026-11-25T09:00:00Z'));
  const { assistant, mailbox } = createLocalEmailAssistant(store, clock);
  try {
    const lines = (await readFile(options.mailboxFile, 'utf8')).split('\n').filter((l) => l.trim() !== '');
    out(bold('▶ email act — the email assistant triages four emails and asks you about two'));
    out(
      dim(
        'The EmailAssistant (lifecycle statechart, offline router and agent, local mailbox) on a memory store.',
      ),
    );
    const records: EmailRecord[] = [];
    for (const line of lines.slice(0, 4)) {
      const record = await assistant.receive(JSON.parse(line));
      if (isTroupeError(record)) throw record;
      records.push(record);
      const { email, decision } = record;
      out(`📨 ${email.subject} — from ${email.from}`);
      if (decision)
        out(
          `   ${decision.classification.toUpperCase()} ${dim(`(${decision.decidedBy})`)}: ${decision.reasoning}`,
        );
    }
    const pending = await assistant.pending();
    out(
      `🙋 Waiting for you: ${pending.map((p) => `${p.id} (${p.request.action_request.action})`).join(', ')}`,
    );

    const notify = pending.find((p) => p.request.action_request.action === 'Email Assistant: notify');
    if (!notify) return;
    const before = await store.memory.get<{ instructions?: string }>(
      memoryNamespaces.triage,
      PREFERENCES_KEY,
    );
    out(`💬 You answer ${notify.id} with feedback: “${FEEDBACK}”`);
    const answered = await assistant.answer(notify.id, { type: 'response', args: FEEDBACK });
    const after = await store.memory.get<{ instructions?: string }>(memoryNamespaces.triage, PREFERENCES_KEY);
    const known = new Set((before?.value.instructions ?? '').split('\n'));
    const learned = (after?.value.instructions ?? '').split('\n').filter((l) => l.trim() && !known.has(l));
    out(
      `🧠 Triage preferences, version ${before?.version ?? 0} → ${after?.version ?? 0}, learned: ${learned.join(' ').trim()}`,
    );
    const draftId = answered.record.interruptId;
    const draft = draftId ? (await assistant.pendingFor(answered.record.email.id))[0] : undefined;
    if (!draftId || !draft) return;
    const args = draft.request.action_request.args as { to?: string; subject?: string; content?: string };
    out(`📝 The agent drafts a reply for review (${draftId}): to ${args.to}, “${args.subject}”`);
    for (const line of (args.content ?? '').split('\n').filter((l) => l.trim())) out(dim(`   │ ${line}`));
    out(`✅ You accept ${draftId}.`);
    const done = await assistant.answer(draftId, { type: 'accept' });
    for (const sent of await mailbox.sent())
      out(
        `📤 Sent to ${sent.to} in thread ${sent.threadId ?? '(new)'}${sent.inReplyTo ? `, In-Reply-To ${sent.inReplyTo}` : ''}; the email is ${done.record.state.value === 'done' ? `done — ${done.record.state.context.outcome}` : 'still open'}.`,
      );
    const still = await assistant.pending();
    out(
      `Still waiting: ${still.map((p) => p.id).join(', ') || 'nothing'}. Try it yourself: \`npx troupe email\`, then \`npx troupe inbox list\`.`,
    );
  } finally {
    await store.close();
  }
}
