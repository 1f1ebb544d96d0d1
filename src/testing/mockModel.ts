import { testingErrorCodes } from '../ports/errorCodes.js';
import type { TokenUsage, TurnGenerationRequest, TurnGenerationResult, TurnModel } from '../ports/model.js';
import { TroupeError } from '../ports/troupeError.js';

/** A tool call a {@link MockReply} makes before it answers: the tool's name and its input. */
export interface MockToolCall {
  tool: string;
  input: unknown;
}

/** A tool call the mock model made, with what the tool returned. */
export interface MockToolResult extends MockToolCall {
  output: unknown;
}

/**
 * One reply of a mock model: its text; an error, thrown as a failing model would throw it; or a
 * whole result, with the tools to call first.
 */
export type MockReply =
  | string
  | Error
  | {
      text: string;
      /** Avatar ids the reply mentions the platform way (default none, as a real model's). */
      mentions?: string[];
      voiceRequested?: boolean;
      usage?: TokenUsage;
      /**
       * Tools to call, in order, before answering: each runs the `execute` of the tool the request
       * offers under that name, with `input` (parsed by its `inputSchema` when that is a zod schema).
       */
      toolCalls?: readonly MockToolCall[];
    };

/**
 * What a mock model answers: the same reply to every call; a script, one reply per call in order
 * (a call past its end fails with `TROUPE_TEST_SCRIPT_ENDED`); or a function of the request and
 * the call's index (0 for the first), which may return a promise (to hold a turn, or to fail on
 * the request's `signal`).
 */
export type MockReplies =
  | MockReply
  | readonly MockReply[]
  | ((request: TurnGenerationRequest, index: number) => MockReply | Promise<MockReply>);

/** Options of {@link mockModel}. */
export interface MockModelOptions {
  /** `provider:model`, as logs and results show it. Default `mock:model`. */
  id?: string;
  /**
   * True when its calls always end inside the process, so a test runtime waits for them however
   * long they take. Default: unset, so a call counts as external, as a real model's does.
   */
  local?: boolean;
  /** False to have the runtime skip building prompts (as for the offline model). Default true. */
  readsPrompt?: boolean;
  /** Keep only the last `retain` calls in {@link MockModel.calls} (long runs, soaks). Default all. */
  retain?: number;
}

/** A {@link TurnModel} for tests, with a record of what it was asked. */
export interface MockModel extends TurnModel {
  /** Every request, oldest first (the last `retain`, when set): prompt, turn, avatar, signal, tools. */
  readonly calls: TurnGenerationRequest[];
  /** Every tool call its replies made, with the tool's output, in order. */
  readonly toolCalls: MockToolResult[];
}

/**
 * A language model for tests: answers from fixed replies, a script or a function, and records
 * every request it gets. It stands where the runtime's `model` option takes a {@link TurnModel}
 * (the offline model, the AI SDK adapter), so a test controls exactly what each avatar says, or
 * makes a turn fail or wait. To test through the AI SDK path instead (prompt conversion, retries,
 * the `TROUPE_MODEL_*` error mapping), give the AI SDK's own `MockLanguageModelV3` (from `ai/test`)
 * to `createAiSdkTurnModel`.
 *
 * @example
 * ```ts
 * const model = mockModel(['Hello, Ada.', new Error('down'), { text: 'Back.', usage: { totalTokens: 9 } }]);
 * const t = createTestRuntime({ model });
 * await t.say('Nova, hello');
 * expect(t.transport.texts()).toEqual(['Hello, Ada.']);
 * expect(model.calls[0]?.prompt.messages.at(-1)?.content).toContain('Nova, hello');
 *
 * mockModel('Noted.'); // the same reply to every call
 * mockModel((request) => `${request.avatar.name} answers.`); // a reply made from the request
 * ```
 */
export function mockModel(replies: MockReplies, options: MockModelOptions = {}): MockModel {
  const id = options.id ?? 'mock:model';
  const calls: TurnGenerationRequest[] = [];
  const toolCalls: MockToolResult[] = [];
  const retain = options.retain;
  let count = 0;
  const replyTo = (request: TurnGenerationRequest, index: number): MockReply | Promise<MockReply> => {
    if (typeof replies === 'function') return replies(request, index);
    if (!Array.isArray(replies)) return replies as MockReply;
    if (index < replies.length) return replies[index] as MockReply;
    throw new TroupeError(
      testingErrorCodes.scriptEnded,
      `The mock model ${id} has ${replies.length} scripted replies, none left for call ${index + 1} (${request.avatar.name} in ${request.channelKey}): add replies, or give a function.`,
      { details: { model: id, replies: replies.length, call: index + 1 } },
    );
  };
  return {
    id,
    offline: false,
    ...(options.local !== undefined ? { local: options.local } : {}),
    ...(options.readsPrompt !== undefined ? { readsPrompt: options.readsPrompt } : {}),
    calls,
    toolCalls,
    async generateTurn(request: TurnGenerationRequest): Promise<TurnGenerationResult> {
      const index = count++;
      if (retain !== 0) calls.push(request);
      if (retain !== undefined && calls.length > retain) calls.shift();
      const reply = await replyTo(request, index);
      if (reply instanceof Error) throw reply;
      if (typeof reply === 'string') return { text: reply, mentions: [], model: id };
      for (const call of reply.toolCalls ?? []) toolCalls.push(await callTool(request, call, id));
      return {
        text: reply.text,
        mentions: reply.mentions ?? [],
        model: id,
        ...(reply.voiceRequested !== undefined ? { voiceRequested: reply.voiceRequested } : {}),
        ...(reply.usage ? { usage: reply.usage } : {}),
      };
    },
  };
}

/** Runs one scripted tool call with the tool the request offers. */
async function callTool(
  request: TurnGenerationRequest,
  call: MockToolCall,
  id: string,
): Promise<MockToolResult> {
  const tool = request.tools?.[call.tool];
  if (!tool) {
    const offered = Object.keys(request.tools ?? {});
    throw new TroupeError(
      testingErrorCodes.toolMissing,
      `The mock model ${id} calls the tool "${call.tool}", but ${request.avatar.name}'s turn offers ${offered.length > 0 ? offered.map((t) => `"${t}"`).join(', ') : 'no tools'}.`,
      { details: { model: id, tool: call.tool, offered } },
    );
  }
  const schema = tool.inputSchema as { parse?: (value: unknown) => unknown } | undefined;
  const input = typeof schema?.parse === 'function' ? schema.parse(call.input) : call.input;
  const output = await tool.execute(input as never);
  return { tool: call.tool, input, output };
}
