import type { JSONValue, ModelMessage, ToolResultPart } from 'ai';
import type { Email } from './emailInput.js';
import type { ResponseToolCall } from './responseTools.js';
import { untrustedEmail } from './triagePrompt.js';

/**
 * One entry of the response agent's history for an email, oldest first: a call carried out with
 * its result (`edited` when the person changed it before it ran), a reviewed call the person
 * rejected with feedback (not carried out), a Question with the person's answer, or the person's
 * note on the email itself (their answer to the notify interrupt).
 */
export type AgentTurn =
  | { kind: 'carried'; call: ResponseToolCall; result: unknown; edited?: true }
  | { kind: 'rejected'; call: ResponseToolCall; feedback: string }
  | { kind: 'answered'; call: Extract<ResponseToolCall, { tool: 'Question' }>; answer: string }
  | { kind: 'note'; feedback: string };

type ToolResultOutput = ToolResultPart['output'];

/** What a rejected call's result says happened, by tool. */
const NOT_DONE: Record<string, string> = {
  send_email_tool: 'Not sent: the user rejected this draft.',
  schedule_meeting_tool: 'Not booked: the user rejected this invitation.',
};

/**
 * The agent's conversation as AI SDK messages: the email (framed as untrusted data), then each
 * turn of the history in order — a tool call as the assistant's message and its outcome as the
 * tool's result, with the person's answer attached to the call it answers. Call ids are the
 * turn's position (`call_1`, `call_2`, …), so the same history always reads the same.
 */
export function agentMessages(email: Email, history: readonly AgentTurn[]): ModelMessage[] {
  const messages: ModelMessage[] = [
    { role: 'user', content: `Please handle this email.\n\n${untrustedEmail(email)}` },
  ];
  let calls = 0;
  for (const turn of history) {
    if (turn.kind === 'note') {
      messages.push({
        role: 'user',
        content: `My note on this email, from reviewing it in my inbox: ${turn.feedback}`,
      });
      continue;
    }
    calls += 1;
    const toolCallId = `call_${calls}`;
    const toolName = turn.call.tool;
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId, toolName, input: turn.call.args }],
    });
    messages.push({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId, toolName, output: outputOf(turn) }],
    });
  }
  return messages;
}

function outputOf(turn: Exclude<AgentTurn, { kind: 'note' }>): ToolResultOutput {
  switch (turn.kind) {
    case 'carried':
      return {
        type: 'json',
        value: toJson(
          turn.edited
            ? {
                note: 'The user edited this call before it was carried out; it was carried out as shown here.',
                result: turn.result ?? null,
              }
            : (turn.result ?? { done: true }),
        ),
      };
    case 'rejected':
      return {
        type: 'text',
        value: `${NOT_DONE[turn.call.tool] ?? 'Not carried out: the user rejected this call.'} Their feedback: ${turn.feedback}`,
      };
    case 'answered':
      return { type: 'text', value: `The user answered: ${turn.answer}` };
  }
}

/** A result as JSON data (what a mailbox or calendar returned is plain data already). */
function toJson(value: unknown): JSONValue {
  return JSON.parse(JSON.stringify(value ?? null)) as JSONValue;
}
