import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake received. */
export interface RecordedSpeechRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (`{ model, input, voice, response_format, ... }`), or the raw text. */
  body: unknown;
}

/** What the next speech request is answered with. */
export type SpeechReply =
  | { kind: 'audio'; bytes?: Uint8Array; contentType?: string; delayMs?: number }
  | { kind: 'error'; status: number; message?: string; headers?: Record<string, string> };

/** Bytes that start like an MP3 frame (0xFF 0xFB), so sniffers call them `audio/mpeg`. */
export const FAKE_MP3 = Uint8Array.from([0xff, 0xfb, 0x90, 0x64, ...Array.from({ length: 60 }, (_, i) => i)]);

/**
 * A tiny OpenAI-compatible server for `POST /v1/audio/speech`, on 127.0.0.1 and a free port. It
 * records every request; `reply(...)` queues answers (audio by default, error statuses on demand).
 */
export interface FakeSpeechServer {
  readonly baseURL: string;
  readonly requests: RecordedSpeechRequest[];
  /** Queue replies for the next requests, in order; after they run out, audio is returned. */
  reply(...replies: SpeechReply[]): void;
  close(): Promise<void>;
}

export async function startFakeSpeechServer(): Promise<FakeSpeechServer> {
  const requests: RecordedSpeechRequest[] = [];
  const queue: SpeechReply[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // keep the raw text
    }
    const path = req.url ?? '/';
    requests.push({ method: req.method ?? 'GET', path, headers: req.headers, body });

    if (req.method !== 'POST' || path !== '/v1/audio/speech') {
      sendJsonError(res, 404, `No route for ${req.method} ${path}`);
      return;
    }
    const next = queue.shift() ?? { kind: 'audio' };
    if (next.kind === 'error') {
      sendJsonError(res, next.status, next.message ?? `Fake error ${next.status}`, next.headers);
      return;
    }
    if (next.delayMs) await new Promise((resolve) => setTimeout(resolve, next.delayMs));
    if (res.destroyed) return;
    const bytes = next.bytes ?? FAKE_MP3;
    res.writeHead(200, {
      'content-type': next.contentType ?? 'audio/mpeg',
      'content-length': bytes.byteLength,
    });
    res.end(Buffer.from(bytes));
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJsonError(res, 500, String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    reply: (...replies) => {
      queue.push(...replies);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function sendJsonError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ error: { message, type: 'fake_error', param: null, code: null } });
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body);
}
