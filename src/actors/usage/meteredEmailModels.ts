import type { z } from 'zod';
import type { AgentModel, AgentStepRequest, AgentToolCall } from '../../ports/agentModel.js';
import type { Clock } from '../../ports/clock.js';
import type { TokenUsage } from '../../ports/model.js';
import type { ObjectModel, ObjectRequest } from '../../ports/objectModel.js';
import type { UsagePurpose, UsageSpender } from '../../ports/usage.js';
import type { UsageLedger } from './usageLedger.js';

/** Where the email assistant's calls are counted: the ledger, and the mailbox they were made for. */
export interface EmailUsageMeter {
  ledger: UsageLedger;
  clock: Clock;
  /** `mail:<mailbox address or id>` (or the channel a new avatar was summoned in). */
  scope: string;
  /** Who the calls speak for; default the email assistant (an avatar's persona is written for it). */
  spender?: UsageSpender;
}

/** Characters of an answer written as JSON (the text the model wrote, give or take spacing). */
function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return 0;
  }
}

function record(
  meter: EmailUsageMeter,
  model: string,
  purpose: UsagePurpose,
  usage: TokenUsage | undefined,
  characters: number,
) {
  meter.ledger.record({
    at: meter.clock.now(),
    model,
    spender: meter.spender ?? { kind: 'email' },
    scope: meter.scope,
    purpose,
    inputTokens: usage?.inputTokens,
    outputTokens: usage?.outputTokens,
    characters,
  });
}

/**
 * `model` with each successful call recorded in the meter's ledger under `purpose` (`triage` or
 * `memory-update`), with the usage the model tells through the request's `onUsage` (a model that
 * tells none is counted as a call without usage). A failed call records nothing.
 */
export function meteredObjectModel(
  model: ObjectModel,
  meter: EmailUsageMeter,
  purpose: UsagePurpose,
): ObjectModel {
  return {
    id: model.id,
    async generateObject<Schema extends z.ZodType>(
      request: ObjectRequest<Schema>,
    ): Promise<z.output<Schema>> {
      let usage: TokenUsage | undefined;
      const answer = await model.generateObject({
        ...request,
        onUsage: (reported) => {
          usage = reported;
          request.onUsage?.(reported);
        },
      });
      record(meter, model.id, purpose, usage, jsonLength(answer));
      return answer;
    },
  };
}

/** The response agent's model with each successful step recorded as `agent-step`. */
export function meteredAgentModel(model: AgentModel, meter: EmailUsageMeter): AgentModel {
  return {
    id: model.id,
    async nextToolCall(request: AgentStepRequest): Promise<AgentToolCall> {
      const call = await model.nextToolCall(request);
      record(meter, model.id, 'agent-step', call.usage, call.toolName.length + jsonLength(call.input));
      return call;
    },
  };
}
