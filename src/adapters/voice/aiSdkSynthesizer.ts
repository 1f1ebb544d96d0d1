import {
  APICallError,
  experimental_generateSpeech as generateSpeech,
  NoSpeechGeneratedError,
  RetryError,
  type SpeechModel,
} from 'ai';
import { type Logger, silentLogger } from '../../logging/logger.js';
import type { SpeechRequest, SpeechSynthesizer, SynthesizedSpeech } from '../../ports/speech.js';
import { isTroupeError, TroupeError } from '../../ports/troupeError.js';
import { checkIntegerOption, checkVoiceId, prepareSpeechText } from './speechText.js';

/** Options for {@link createAiSdkSynthesizer}. */
export interface AiSdkSynthesizerOptions {
  /** An AI SDK speech model, e.g. `openai.speech('tts-1')`. */
  model: SpeechModel;
  /** Voice used when a request names none (OpenAI: `alloy`, `nova`, ...). Default: the provider's. */
  voice?: string;
  /** The whole call (retries included) is cancelled after this long. Default 30 s. */
  timeoutMs?: number;
  /**
   * Retries the AI SDK makes itself on 429/5xx/network errors. Default 0: Troupe's routing decides
   * about retrying from `retryable`, and SDK retries would wait seconds inside one delivery.
   */
  maxRetries?: number;
  /** Requested audio format (`mp3`, `wav`, `opus`, `aac`, `flac`, `pcm` for OpenAI). Default: the provider's (mp3). */
  outputFormat?: string;
  /** Longer texts are clipped at a word boundary. Default 4096 (OpenAI's limit). */
  maxChars?: number;
  logger?: Logger;
}

/**
 * A {@link SpeechSynthesizer} over any AI SDK speech model (`experimental_generateSpeech`).
 * Failures become `TroupeError`s: `TROUPE_SPEECH_AUTH` (401/403), `TROUPE_SPEECH_FAILED`
 * (retryable for 408/429/5xx, network errors and timeouts), `TROUPE_SPEECH_ABORTED` (the caller's
 * signal), `TROUPE_SPEECH_EMPTY`, `TROUPE_SPEECH_INVALID_VOICE`.
 */
export function createAiSdkSynthesizer(options: AiSdkSynthesizerOptions): SpeechSynthesizer {
  const { model, outputFormat } = options;
  const defaultVoice = options.voice === undefined ? undefined : checkVoiceId(options.voice);
  const timeoutMs = checkIntegerOption('timeoutMs', options.timeoutMs ?? 30_000, 1, 600_000);
  const maxRetries = checkIntegerOption('maxRetries', options.maxRetries ?? 0, 0, 10);
  const maxChars = checkIntegerOption('maxChars', options.maxChars ?? 4096, 1, 1_000_000);
  const logger = options.logger ?? silentLogger();
  const id = typeof model === 'string' ? model : `${model.provider}:${model.modelId}`;

  return {
    id,
    async synthesize(request: SpeechRequest): Promise<SynthesizedSpeech> {
      const text = prepareSpeechText(request.text, maxChars);
      const requested = request.voiceId ?? defaultVoice;
      const voice = requested === undefined ? undefined : checkVoiceId(requested);
      if (request.signal?.aborted) {
        throw new TroupeError('TROUPE_SPEECH_ABORTED', 'Speech synthesis was cancelled.', {
          cause: request.signal.reason,
        });
      }
      const timeout = AbortSignal.timeout(timeoutMs);
      const abortSignal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
      const started = performance.now();
      try {
        const result = await generateSpeech({
          model,
          text,
          ...(voice === undefined ? {} : { voice }),
          ...(outputFormat === undefined ? {} : { outputFormat }),
          maxRetries,
          abortSignal,
        });
        const headers = result.responses.at(-1)?.headers;
        const mediaType = resolveMediaType(result.audio.mediaType, headers?.['content-type'], outputFormat);
        const audio = result.audio.uint8Array;
        logger.debug(
          {
            model: id,
            voice,
            chars: text.length,
            bytes: audio.byteLength,
            mediaType,
            durationMs: Math.round(performance.now() - started),
          },
          'speech synthesized',
        );
        return { audio, mediaType, extension: extensionFor(mediaType) };
      } catch (error) {
        const mapped = toSpeechError(error, {
          model: id,
          timeoutMs,
          timedOut: timeout.aborted,
          cancelled: request.signal?.aborted === true,
        });
        logger.debug({ model: id, err: mapped }, 'speech synthesis failed');
        throw mapped;
      }
    },
  };
}

interface FailureContext {
  model: string;
  timeoutMs: number;
  timedOut: boolean;
  cancelled: boolean;
}

/** An AI SDK failure as a `TroupeError` with a `TROUPE_SPEECH_*` code. */
function toSpeechError(error: unknown, context: FailureContext): TroupeError {
  if (isTroupeError(error)) return error;
  const { model } = context;
  if (context.cancelled) {
    return new TroupeError('TROUPE_SPEECH_ABORTED', 'Speech synthesis was cancelled.', { cause: error });
  }
  if (context.timedOut) {
    return new TroupeError(
      'TROUPE_SPEECH_FAILED',
      `The speech model ${model} did not answer within ${context.timeoutMs} ms.`,
      {
        retryable: true,
        cause: error,
        details: { model, timeoutMs: context.timeoutMs },
      },
    );
  }
  if (RetryError.isInstance(error)) {
    const last = toSpeechError(error.lastError, context);
    return new TroupeError(last.code, `${last.message} (after ${error.errors.length} attempts)`, {
      retryable: last.retryable,
      cause: error,
      details: { ...last.details, attempts: error.errors.length },
    });
  }
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    const details = { model, status, url: error.url };
    if (status === 401 || status === 403) {
      return new TroupeError(
        'TROUPE_SPEECH_AUTH',
        `The speech service refused the credentials (HTTP ${status}) for ${model}: check the API key and its access to this model.`,
        { cause: error, details },
      );
    }
    const retryable =
      status === 408 || status === 429 || (status !== undefined && status >= 500) || error.isRetryable;
    const what = status === undefined ? 'could not be reached' : `answered HTTP ${status}`;
    return new TroupeError(
      'TROUPE_SPEECH_FAILED',
      `The speech service for ${model} ${what}: ${error.message}`,
      {
        retryable,
        cause: error,
        details,
      },
    );
  }
  if (NoSpeechGeneratedError.isInstance(error)) {
    return new TroupeError('TROUPE_SPEECH_FAILED', `The speech model ${model} returned no audio.`, {
      retryable: true,
      cause: error,
      details: { model },
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new TroupeError('TROUPE_SPEECH_FAILED', `Speech synthesis with ${model} failed: ${message}`, {
    cause: error,
    details: { model },
  });
}

const FORMAT_MEDIA_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  opus: 'audio/ogg',
  ogg: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  pcm: 'audio/pcm',
};

/**
 * The AI SDK sniffs the media type from the first bytes and falls back to the non-standard
 * `audio/mp3` when it does not recognise them; then the response's Content-Type, and then the
 * requested format, say better.
 */
function resolveMediaType(
  sniffed: string,
  contentType: string | undefined,
  outputFormat: string | undefined,
): string {
  if (sniffed && sniffed !== 'audio/mp3') return normaliseMediaType(sniffed);
  const header = contentType?.split(';')[0]?.trim().toLowerCase();
  if (header?.startsWith('audio/')) return normaliseMediaType(header);
  return FORMAT_MEDIA_TYPES[outputFormat?.toLowerCase() ?? 'mp3'] ?? 'audio/mpeg';
}

function normaliseMediaType(mediaType: string): string {
  switch (mediaType) {
    case 'audio/mp3':
    case 'audio/mpeg3':
      return 'audio/mpeg';
    case 'audio/x-wav':
    case 'audio/wave':
    case 'audio/vnd.wave':
      return 'audio/wav';
    default:
      return mediaType;
  }
}

const MEDIA_TYPE_EXTENSIONS: Record<string, string> = {
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'audio/ogg': 'ogg',
  'audio/opus': 'opus',
  'audio/aac': 'aac',
  'audio/flac': 'flac',
  'audio/webm': 'webm',
  'audio/mp4': 'm4a',
  'audio/pcm': 'pcm',
};

function extensionFor(mediaType: string): string {
  return MEDIA_TYPE_EXTENSIONS[mediaType] ?? mediaType.split('/')[1]?.replace(/[^a-z0-9]/gi, '') ?? 'bin';
}
