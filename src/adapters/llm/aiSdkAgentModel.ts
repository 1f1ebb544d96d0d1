import { generateText, type ToolSet, tool } from 'ai';
import { silentLogger } from '../../logging/logger.js';
import type { AgentModel, AgentStepRequest, AgentToolCall } from '../../ports/agentModel.js';
import { TroupeError } from '../../ports/troupeError.js';
import { modelCallDefaults, toTokenUsage } from './aiSdkModel.js';
import type { AiSdkObjectModelOptions } from './aiSdkObjectModel.js';
import { runModelCall } from './modelCall.js';

/** How {@link createAiSdkAgentModel} reaches its model: as the object model does. */
export type AiSdkAgentModelOptions = AiSdkObjectModelOptions;

/**
 * An {@link AgentModel} over an AI SDK model: `generateText` with the tools (their zod schemas,
 * no `execute`: the caller carries the call out, after review where it needs one), the message
 * history and `toolChoice: 'required'`, one step. Same timeout, retries, concurrency limit,
 * logging and error mapping as the other model calls; an answer without exactly one valid tool
 * call is `TROUPE_MODEL_FAILED` (not retryable: the email fails with that reason). Of several
 * calls in one answer (parallel tool calls), the first is taken.
 */
export function createAiSdkAgentModel(options: AiSdkAgentModelOptions): AgentModel {
  const id = options.id;
  return {
    id,
    nextToolCall(request: AgentStepRequest): Promise<AgentToolCall> {
      const tools: ToolSet = {};
      for (const [name, spec] of Object.entries(request.tools))
        tools[name] = tool({ description: spec.description, inputSchema: spec.inputSchema });
      return runModelCall(
        {
          modelId: id,
          operation: 'agent',
          timeoutMs: options.timeoutMs ?? modelCallDefaults.timeoutMs,
          signal: request.signal,
          limit: options.limit,
          logger: options.logger ?? silentLogger(),
          apiKeyVariable: options.apiKeyVariable,
        },
        async (abortSignal) => {
          const result = await generateText({
            model: options.model,
            system: request.system,
            messages: request.messages,
            tools,
            toolChoice: 'required',
            maxRetries: options.maxRetries ?? modelCallDefaults.maxRetries,
            abortSignal,
            temperature: 0,
          });
          // Models that call tools in parallel may answer with several: the loop takes one step at
          // a time, so the first is carried out and the model sees it before choosing the next.
          const calls = result.toolCalls;
          const call = calls[0];
          if (calls.length > 1)
            (options.logger ?? silentLogger()).debug(
              { model: id, calls: calls.map((c) => c.toolName) },
              'the model called several tools at once; only the first is taken',
            );
          if (!call || call.invalid) {
            const what = !call
              ? 'no tool call'
              : `a call of ${call.toolName} that does not fit its arguments (${describeError(call.error)})`;
            throw new TroupeError(
              'TROUPE_MODEL_FAILED',
              `Model ${id} answered with ${what}; it must call exactly one of the tools offered.`,
              { retryable: false, details: { model: id } },
            );
          }
          const usage = toTokenUsage(result.totalUsage);
          return {
            value: { toolCallId: call.toolCallId, toolName: call.toolName, input: call.input, usage },
            usage,
            steps: result.steps.length,
            finishReason: result.finishReason,
          };
        },
      );
    },
  };
}

function describeError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error ?? 'unknown');
  const line = (text.split('\n')[0] ?? '').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
