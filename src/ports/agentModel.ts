import type { ModelMessage } from 'ai';
import type { z } from 'zod';
import type { TokenUsage } from './model.js';

/** A tool offered to an agent model: what it is for and its arguments' schema. Never executed by the model's SDK. */
export interface AgentTool {
  description: string;
  inputSchema: z.ZodType;
}

/** One step of a tool-calling agent: its instructions, the history so far and the tools it may call. */
export interface AgentStepRequest {
  system: string;
  /** The conversation: the task, then every tool call made so far with its result (AI SDK messages). */
  messages: ModelMessage[];
  tools: Record<string, AgentTool>;
  signal?: AbortSignal;
}

/** The one tool call a model chose, not carried out (the caller runs it, after review if it needs one). */
export interface AgentToolCall {
  toolCallId: string;
  toolName: string;
  /** The arguments as the model wrote them; the caller validates them against the tool's schema. */
  input: unknown;
  usage?: TokenUsage;
}

/**
 * A language model that takes one step of a tool-calling loop: it must call exactly one of the
 * tools offered, and the call is handed back rather than executed. Failures are `TroupeError`s
 * with `TROUPE_MODEL_*` codes; an answer without a tool call is `TROUPE_MODEL_FAILED`.
 */
export interface AgentModel {
  /** `provider:model`, for logs and reports. */
  readonly id: string;
  nextToolCall(request: AgentStepRequest): Promise<AgentToolCall>;
}
