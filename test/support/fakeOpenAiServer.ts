/**
 * A small OpenAI-compatible HTTP server on loopback for tests that drive the real AI SDK.
 *
 * `POST /v1/chat/completions` (non-streaming) answers from a queue the test fills with
 * {@link FakeReply}s: text, tool calls, a JSON object for structured output (only when the request
 * carried a `json_schema` response format), an error status, or no answer at all. Once the queue
 * is empty, a responder the test set ({@link FakeOpenAiServer.respondWith}) answers from the
 * request itself (a model that behaves the same on every call, however often it is asked). Every request is
 * recorded (method, path, headers, parsed body) so tests can assert what was sent, and the number
 * of requests in flight is tracked. Other routes (e.g. `POST /v1/audio/speech`) can be added with
 * `routes`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Token counts the fake reports (defaults: 10 in, 5 out). */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** One scripted answer to a chat completion request (`usage: null`: the answer reports none). */
export type FakeReply =
  | { text: string; usage?: FakeUsage | null; delayMs?: number }
  | { toolCalls: { name: string; arguments: unknown; id?: string }[]; usage?: FakeUsage | null }
  | { json: unknown; usage?: FakeUsage | null }
  | { status: number; message?: string; headers?: Record<string, string> }
  | { hang: true };

/** A request the fake received. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The JSON body, parsed (or the raw text when it is not JSON). */
  body: unknown;
}

/** The shape of a chat completion request body, as far as tests look into it. */
export interface ChatRequestBody {
  model: string;
  messages: {
    role: string;
    content: unknown;
    name?: string;
    tool_calls?: unknown[];
    tool_call_id?: string;
  }[];
  tools?: { type: string; function: { name: string; description?: string; parameters: unknown } }[];
  response_format?: { type: string; json_schema?: { name?: string; schema: unknown; strict?: boolean } };
  [key: string]: unknown;
}

/** Handles an extra route; gets the recorded request and the response to write. */
/** Everything a chat request shows the model, as one text. */
export function promptText(body: ChatRequestBody): string {
  return body.messages
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n');
}

/** True for a request that prompts the avatar named `name` (its system prompt starts "You are <name>,"). */
export const promptsAvatar = (name: string) => (body: ChatRequestBody) =>
  body.messages.some((m) => m.role === 'system' && String(m.content).startsWith(`You are ${name},`));

export type FakeRoute = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

/** A running fake server. */
export interface FakeOpenAiServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:40123/v1`. */
  readonly baseUrl: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Bodies of the chat completion requests, in order. */
  chatRequests(): ChatRequestBody[];
  /** Adds replies to the end of the queue. */
  enqueue(...replies: FakeReply[]): void;
  /** Answers requests once the queue is empty, from each request's body (none: a 400). */
  respondWith(responder: ((body: ChatRequestBody) => FakeReply) | undefined): void;
  /** Chat requests being answered right now, and the most there ever were at once. */
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Forgets queued replies, recorded requests and the in-flight high-water mark. */
  reset(): void;
  /** Drops every connection (hanging ones too) and stops listening. */
  close(): Promise<void>;
}

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

function completion(
  model: string,
  message: Record<string, unknown>,
  finishReason: string,
  usage?: FakeUsage | null,
) {
  const answer = {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason }],
  };
  if (usage === null) return answer;
  const { prompt_tokens, completion_tokens } = usage ?? { prompt_tokens: 10, completion_tokens: 5 };
  return {
    ...answer,
    usage: { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens },
  };
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Starts the fake on 127.0.0.1 at a free port. */
export async function startFakeOpenAiServer(
  options: { routes?: Record<string, FakeRoute> } = {},
): Promise<FakeOpenAiServer> {
  const queue: FakeReply[] = [];
  const requests: RecordedRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let responder: ((body: ChatRequestBody) => FakeReply) | undefined;

  const answerChat = async (recorded: RecordedRequest, response: ServerResponse) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    response.on('close', () => {
      inFlight -= 1;
    });
    const body = recorded.body as ChatRequestBody;
    const reply = queue.shift() ?? responder?.(body);
    if (!reply) {
      sendJson(response, 400, { error: { message: 'fake server: no scripted reply left', type: 'test' } });
      return;
    }
    if ('hang' in reply) return; // never answer; the client's abort (or close()) ends it
    if ('status' in reply) {
      const message = reply.message ?? `fake error ${reply.status}`;
      sendJson(response, reply.status, { error: { message, type: 'fake_error', code: null } }, reply.headers);
      return;
    }
    if ('toolCalls' in reply) {
      const toolCalls = reply.toolCalls.map((call, i) => ({
        id: call.id ?? `call_${requests.length}_${i}`,
        type: 'function',
        function: { name: call.name, arguments: JSON.stringify(call.arguments) },
      }));
      sendJson(
        response,
        200,
        completion(body.model, { content: null, tool_calls: toolCalls }, 'tool_calls', reply.usage),
      );
      return;
    }
    if ('json' in reply) {
      if (body.response_format?.type !== 'json_schema') {
        sendJson(response, 400, {
          error: { message: 'fake server: expected a json_schema response_format' },
        });
        return;
      }
      sendJson(
        response,
        200,
        completion(body.model, { content: JSON.stringify(reply.json) }, 'stop', reply.usage),
      );
      return;
    }
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    sendJson(response, 200, completion(body.model, { content: reply.text }, 'stop', reply.usage));
  };

  const server = createServer((request, response) => {
    void (async () => {
      const recorded: RecordedRequest = {
        method: request.method ?? 'GET',
        path: (request.url ?? '/').split('?')[0] ?? '/',
        headers: request.headers,
        body: await readBody(request),
      };
      requests.push(recorded);
      const route = `${recorded.method} ${recorded.path}`;
      if (route === 'POST /v1/chat/completions') return answerChat(recorded, response);
      const extra = options.routes?.[route];
      if (extra) return extra(recorded, response);
      sendJson(response, 404, { error: { message: `fake server: no route ${route}` } });
    })().catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, { error: { message: String(error) } });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    chatRequests: () =>
      requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body as ChatRequestBody),
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    respondWith: (next) => {
      responder = next;
    },
    reset: () => {
      queue.length = 0;
      responder = undefined;
      requests.length = 0;
      maxInFlight = inFlight;
    },
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
