import type { AgentTurn } from '../../email/agentHistory.js';
import { NOTIFY_ACTION } from '../../email/agentInbox.js';
import type { ResponseToolCall } from '../../email/responseTools.js';
import type { AnsweredInterrupt, EmailRecord } from './emailRecord.js';

/**
 * The response agent's history for an email, written from its record: each step carried out with
 * its result, and each answer of the person's where it was given (its `step`: how many steps had
 * been carried out then) — a rejected call with the feedback, a Question with the answer, an
 * edited call marked on the step that carried it out, the note on a notify interrupt. Answers an
 * earlier build stored without a place come after the steps.
 */
export function agentHistory(record: EmailRecord): AgentTurn[] {
  const { steps } = record;
  const placed = new Map<number, AgentTurn[]>();
  const edited = new Set<number>();
  const place = (at: number, turn: AgentTurn) => placed.set(at, [...(placed.get(at) ?? []), turn]);
  for (const entry of record.answered ?? []) {
    const at = Math.min(entry.step ?? steps.length, steps.length);
    const turn = turnOf(entry);
    if (entry.answer.type === 'edit' && entry.step !== undefined) edited.add(entry.step);
    if (turn) place(at, turn);
  }
  const history: AgentTurn[] = [];
  for (let i = 0; i <= steps.length; i += 1) {
    history.push(...(placed.get(i) ?? []));
    const step = steps[i];
    if (step)
      history.push({
        kind: 'carried',
        call: step.call,
        result: step.result,
        ...(edited.has(i) ? { edited: true as const } : {}),
      });
  }
  return history;
}

/** The turn an answer adds on its own: feedback (on a call or the email) or a Question's answer. */
function turnOf(entry: AnsweredInterrupt): AgentTurn | undefined {
  const { answer } = entry;
  if (answer.type !== 'response') return undefined;
  if (entry.action === NOTIFY_ACTION) return { kind: 'note', feedback: answer.args };
  const call = { tool: entry.action, args: entry.args ?? {} } as ResponseToolCall;
  if (call.tool === 'Question') return { kind: 'answered', call, answer: answer.args };
  return { kind: 'rejected', call, feedback: answer.args };
}
