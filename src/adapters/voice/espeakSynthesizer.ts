import { spawn } from 'node:child_process';
import { type Logger, silentLogger } from '../../logging/logger.js';
import type { SpeechRequest, SpeechSynthesizer, SynthesizedSpeech } from '../../ports/speech.js';
import { TroupeError } from '../../ports/troupeError.js';
import { checkIntegerOption, checkVoiceId, prepareSpeechText } from './speechText.js';

/** Options for {@link createEspeakSynthesizer}. */
export interface EspeakSynthesizerOptions {
  /** Path or name of the `espeak-ng` executable (looked up on `PATH`). Default `espeak-ng`. */
  binary?: string;
  /** Voice used when a request names none. Default `en-us`. */
  voice?: string;
  /** Speaking rate, 80 to 450. Default 165. */
  wordsPerMinute?: number;
  /** The process is killed after this long (`TROUPE_SPEECH_FAILED`, retryable). Default 10 s. */
  timeoutMs?: number;
  /** Longer texts are clipped at a word boundary to this many UTF-16 code units. Default 4000. */
  maxChars?: number;
  logger?: Logger;
}

const STDERR_LIMIT = 2000;

/**
 * A {@link SpeechSynthesizer} that runs the local `espeak-ng` program: offline, fast, robotic.
 * The text goes to the process on stdin (never through a shell, never as an argument), so text
 * starting with `-` or holding quotes or `;` is spoken as written. Produces 16-bit mono PCM WAV
 * (22 050 Hz) with correct RIFF and data sizes.
 */
export function createEspeakSynthesizer(options: EspeakSynthesizerOptions = {}): SpeechSynthesizer {
  const binary = options.binary ?? 'espeak-ng';
  const defaultVoice = checkVoiceId(options.voice ?? 'en-us');
  const wordsPerMinute = checkIntegerOption('wordsPerMinute', options.wordsPerMinute ?? 165, 80, 450);
  const timeoutMs = checkIntegerOption('timeoutMs', options.timeoutMs ?? 10_000, 1, 600_000);
  const maxChars = checkIntegerOption('maxChars', options.maxChars ?? 4000, 1, 1_000_000);
  const logger = options.logger ?? silentLogger();

  return {
    id: 'espeak-ng',
    local: true,
    async synthesize(request: SpeechRequest): Promise<SynthesizedSpeech> {
      const text = prepareSpeechText(request.text, maxChars);
      const voice = checkVoiceId(request.voiceId ?? defaultVoice);
      throwIfAborted(request.signal);
      const started = performance.now();
      const output = await runEspeak({
        binary,
        args: ['-v', voice, '-s', String(wordsPerMinute), '-b', '1', '--stdout', '--stdin'],
        text,
        timeoutMs,
        signal: request.signal,
        voice,
      });
      const audio = repairWavSizes(output);
      logger.debug(
        {
          voice,
          chars: text.length,
          bytes: audio.byteLength,
          durationMs: Math.round(performance.now() - started),
        },
        'espeak-ng synthesized speech',
      );
      return { audio, mediaType: 'audio/wav', extension: 'wav' };
    },
  };
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new TroupeError('TROUPE_SPEECH_ABORTED', 'Speech synthesis was cancelled.', {
      cause: signal.reason,
    });
  }
}

interface EspeakRun {
  binary: string;
  args: string[];
  text: string;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  voice: string;
}

function runEspeak(run: EspeakRun): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const child = spawn(run.binary, run.args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
      windowsHide: true,
    });
    const chunks: Buffer[] = [];
    let stderr = '';
    let timedOut = false;
    let aborted = false;
    let settled = false;

    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, run.timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      child.kill('SIGKILL');
    };
    run.signal?.addEventListener('abort', onAbort, { once: true });

    const settle = (error: TroupeError | undefined, value?: Buffer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      run.signal?.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve(value ?? Buffer.alloc(0));
    };

    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'EACCES') {
        settle(
          new TroupeError(
            'TROUPE_SPEECH_UNAVAILABLE',
            `Cannot run ${run.binary} (${error.code}): espeak-ng is needed for offline speech. Install it (Debian/Ubuntu: apt-get install espeak-ng) or pass its path as the binary option.`,
            { cause: error, details: { binary: run.binary, errno: error.code } },
          ),
        );
        return;
      }
      settle(
        new TroupeError('TROUPE_SPEECH_FAILED', `Cannot run ${run.binary}: ${error.message}`, {
          cause: error,
          details: { binary: run.binary, errno: error.code },
        }),
      );
    });
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < STDERR_LIMIT) stderr += chunk.slice(0, STDERR_LIMIT - stderr.length);
    });
    // A process that dies early closes its stdin (EPIPE); its exit status reports what happened.
    child.stdin.on('error', () => {});

    child.on('close', (exitCode, signal) => {
      if (aborted) {
        settle(
          new TroupeError('TROUPE_SPEECH_ABORTED', 'Speech synthesis was cancelled.', {
            cause: run.signal?.reason,
          }),
        );
        return;
      }
      if (timedOut) {
        settle(
          new TroupeError('TROUPE_SPEECH_FAILED', `espeak-ng did not finish within ${run.timeoutMs} ms.`, {
            retryable: true,
            details: { timeoutMs: run.timeoutMs },
          }),
        );
        return;
      }
      const message = stderr.trim();
      if (exitCode !== 0) {
        if (/voice does not exist|failed to read voice/i.test(message)) {
          settle(
            new TroupeError('TROUPE_SPEECH_INVALID_VOICE', `espeak-ng has no voice named "${run.voice}".`, {
              details: { voiceId: run.voice, stderr: message },
            }),
          );
          return;
        }
        settle(
          new TroupeError(
            'TROUPE_SPEECH_FAILED',
            `espeak-ng failed (${signal ? `signal ${signal}` : `exit code ${exitCode}`})${message ? `: ${message}` : '.'}`,
            // Killed by someone else's signal: the machine may have been busy; another try may work.
            { retryable: signal !== null, details: { exitCode, signal, stderr: message } },
          ),
        );
        return;
      }
      settle(undefined, Buffer.concat(chunks));
    });

    child.stdin.end(run.text, 'utf8');
  });
}

const WAV_HEADER_MIN = 12;

/**
 * Sets the RIFF and `data` chunk sizes of a WAV buffer from its actual length (in place) and
 * returns it. `espeak-ng --stdout` writes placeholder sizes (0x7fffffff-ish) when stdout is a pipe,
 * because it cannot seek back to fill them in. Throws `TROUPE_SPEECH_FAILED` for anything that is
 * not a RIFF/WAVE stream with a `data` chunk.
 */
export function repairWavSizes(output: Buffer): Buffer {
  let wav = output;
  const malformed = (reason: string): TroupeError =>
    new TroupeError('TROUPE_SPEECH_FAILED', `espeak-ng produced no usable audio: ${reason}.`, {
      details: { bytes: wav.byteLength },
    });
  if (
    wav.byteLength < WAV_HEADER_MIN ||
    wav.toString('latin1', 0, 4) !== 'RIFF' ||
    wav.toString('latin1', 8, 12) !== 'WAVE'
  ) {
    throw malformed(wav.byteLength === 0 ? 'the output was empty' : 'the output is not a RIFF/WAVE stream');
  }
  let offset = WAV_HEADER_MIN;
  while (offset + 8 <= wav.byteLength) {
    const id = wav.toString('latin1', offset, offset + 4);
    if (id === 'data') {
      let dataBytes = wav.byteLength - (offset + 8);
      // Samples are 16-bit: an odd trailing byte is a torn sample.
      if (dataBytes % 2 === 1) {
        dataBytes -= 1;
        wav = wav.subarray(0, wav.byteLength - 1);
      }
      if (dataBytes === 0) throw malformed('it holds no samples');
      wav.writeUInt32LE(dataBytes, offset + 4);
      wav.writeUInt32LE(wav.byteLength - 8, 4);
      return wav;
    }
    const size = wav.readUInt32LE(offset + 4);
    offset += 8 + size + (size % 2);
  }
  throw malformed('the WAV stream has no data chunk');
}
