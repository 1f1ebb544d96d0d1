import { createOpenAI } from '@ai-sdk/openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAiSdkSynthesizer } from '../../../src/adapters/voice/index.js';
import { isTroupeError, type TroupeError } from '../../../src/ports/troupeError.js';
import { FAKE_MP3, type FakeSpeechServer, startFakeSpeechServer } from '../../support/fakeSpeechServer.js';

async function failure(promise: Promise<unknown>): Promise<TroupeError> {
  try {
    await promise;
  } catch (error) {
    if (isTroupeError(error)) return error;
    throw error;
  }
  throw new Error('expected the promise to reject');
}

describe('AI SDK synthesizer (OpenAI provider against a local fake)', () => {
  let server: FakeSpeechServer;
  const model = () => createOpenAI({ baseURL: server.baseURL, apiKey: 'test' }).speech('tts-1');

  beforeAll(async () => {
    server = await startFakeSpeechServer();
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.requests.length = 0;
  });

  it('sends the text and voice to POST /v1/audio/speech and returns the audio bytes', async () => {
    const speech = createAiSdkSynthesizer({ model: model(), voice: 'alloy', timeoutMs: 60_000 });
    expect(speech.id).toBe('openai.speech:tts-1');
    const result = await speech.synthesize({ text: '  Hello there, "friend"; how are you?  ' });

    expect(Buffer.from(result.audio).equals(Buffer.from(FAKE_MP3))).toBe(true);
    expect(result.mediaType).toBe('audio/mpeg');
    expect(result.extension).toBe('mp3');

    expect(server.requests).toHaveLength(1);
    const request = server.requests[0];
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v1/audio/speech');
    expect(request?.headers.authorization).toBe('Bearer test');
    expect(request?.body).toMatchObject({
      model: 'tts-1',
      input: 'Hello there, "friend"; how are you?',
      voice: 'alloy',
    });
  });

  it('lets the request voice override the default voice', async () => {
    const speech = createAiSdkSynthesizer({ model: model(), voice: 'alloy' });
    await speech.synthesize({ text: 'Hi', voiceId: 'nova' });
    expect(server.requests[0]?.body).toMatchObject({ voice: 'nova', input: 'Hi' });
  });

  it('asks for the configured format and takes the media type from the audio or the response', async () => {
    const wavBytes = Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVEfmt '), Buffer.alloc(32, 1)]);
    server.reply({ kind: 'audio', bytes: wavBytes, contentType: 'audio/wav' });
    const speech = createAiSdkSynthesizer({ model: model(), outputFormat: 'wav' });
    const wav = await speech.synthesize({ text: 'Hi' });
    expect(server.requests[0]?.body).toMatchObject({ response_format: 'wav' });
    expect(wav).toMatchObject({ mediaType: 'audio/wav', extension: 'wav' });

    // Bytes the SDK cannot recognise: the response's Content-Type decides.
    server.reply({ kind: 'audio', bytes: Uint8Array.from([1, 2, 3, 4]), contentType: 'audio/flac' });
    const flac = await speech.synthesize({ text: 'Hi' });
    expect(flac).toMatchObject({ mediaType: 'audio/flac', extension: 'flac' });
  });

  it('clips over-long text at a word boundary before sending', async () => {
    const speech = createAiSdkSynthesizer({ model: model(), maxChars: 30 });
    await speech.synthesize({ text: 'one two three four five six seven eight nine ten' });
    expect(server.requests[0]?.body).toMatchObject({ input: 'one two three four five six' });
  });

  it('maps 401 and 403 to TROUPE_SPEECH_AUTH (not retryable)', async () => {
    const speech = createAiSdkSynthesizer({ model: model() });
    for (const status of [401, 403]) {
      server.reply({ kind: 'error', status, message: 'Incorrect API key provided' });
      const error = await failure(speech.synthesize({ text: 'Hi' }));
      expect(error.code).toBe('TROUPE_SPEECH_AUTH');
      expect(error.retryable).toBe(false);
      expect(error.details).toMatchObject({ status });
    }
  });

  it('maps 500 and 429 to a retryable TROUPE_SPEECH_FAILED, and 400 to a final one', async () => {
    const speech = createAiSdkSynthesizer({ model: model() });
    for (const status of [500, 503, 429]) {
      server.reply({ kind: 'error', status, message: 'try later' });
      const error = await failure(speech.synthesize({ text: 'Hi' }));
      expect(error.code).toBe('TROUPE_SPEECH_FAILED');
      expect(error.retryable).toBe(true);
      expect(error.details).toMatchObject({ status });
    }
    server.reply({ kind: 'error', status: 400, message: 'Invalid value for voice' });
    const error = await failure(speech.synthesize({ text: 'Hi' }));
    expect(error.code).toBe('TROUPE_SPEECH_FAILED');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('Invalid value for voice');
  });

  it('reports the last error when the SDK retried itself', async () => {
    server.reply(
      { kind: 'error', status: 500, headers: { 'retry-after-ms': '1' } },
      { kind: 'error', status: 500, headers: { 'retry-after-ms': '1' } },
    );
    const speech = createAiSdkSynthesizer({ model: model(), maxRetries: 1 });
    const error = await failure(speech.synthesize({ text: 'Hi' }));
    expect(server.requests).toHaveLength(2);
    expect(error.code).toBe('TROUPE_SPEECH_FAILED');
    expect(error.retryable).toBe(true);
    expect(error.details).toMatchObject({ status: 500, attempts: 2 });
  });

  it('times out as a retryable TROUPE_SPEECH_FAILED', async () => {
    server.reply({ kind: 'audio', delayMs: 2_000 });
    const speech = createAiSdkSynthesizer({ model: model(), timeoutMs: 100 });
    const error = await failure(speech.synthesize({ text: 'Hi' }));
    expect(error.code).toBe('TROUPE_SPEECH_FAILED');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('100 ms');
  });

  it("stops on the caller's abort signal with TROUPE_SPEECH_ABORTED", async () => {
    server.reply({ kind: 'audio', delayMs: 2_000 });
    const speech = createAiSdkSynthesizer({ model: model(), timeoutMs: 5_000 });
    const controller = new AbortController();
    const pending = failure(speech.synthesize({ text: 'Hi', signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    expect((await pending).code).toBe('TROUPE_SPEECH_ABORTED');
  });

  it('maps an unreachable server to a retryable TROUPE_SPEECH_FAILED', async () => {
    const closed = await startFakeSpeechServer();
    await closed.close();
    const speech = createAiSdkSynthesizer({
      model: createOpenAI({ baseURL: closed.baseURL, apiKey: 'test' }).speech('tts-1'),
    });
    const error = await failure(speech.synthesize({ text: 'Hi' }));
    expect(error.code).toBe('TROUPE_SPEECH_FAILED');
    expect(error.retryable).toBe(true);
  });

  it('rejects empty text and unsafe voice ids without calling the server', async () => {
    const speech = createAiSdkSynthesizer({ model: model() });
    expect((await failure(speech.synthesize({ text: '   ' }))).code).toBe('TROUPE_SPEECH_EMPTY');
    expect((await failure(speech.synthesize({ text: 'Hi', voiceId: 'nova"}' }))).code).toBe(
      'TROUPE_SPEECH_INVALID_VOICE',
    );
    expect(server.requests).toHaveLength(0);
  });
});
