import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEspeakSynthesizer, repairWavSizes } from '../../../src/adapters/voice/index.js';
import { isTroupeError, type TroupeError } from '../../../src/ports/troupeError.js';

interface WavInfo {
  riffSize: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  dataOffset: number;
  dataSize: number;
}

/** Reads a RIFF/WAVE header independently of the code under test. */
function parseWav(bytes: Uint8Array): WavInfo {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  expect(buf.toString('latin1', 0, 4)).toBe('RIFF');
  expect(buf.toString('latin1', 8, 12)).toBe('WAVE');
  let offset = 12;
  let fmt: Pick<WavInfo, 'channels' | 'sampleRate' | 'bitsPerSample'> | undefined;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('latin1', offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    if (id === 'fmt ') {
      expect(buf.readUInt16LE(offset + 8)).toBe(1); // PCM
      fmt = {
        channels: buf.readUInt16LE(offset + 10),
        sampleRate: buf.readUInt32LE(offset + 12),
        bitsPerSample: buf.readUInt16LE(offset + 22),
      };
    }
    if (id === 'data') {
      if (!fmt) throw new Error('data chunk before fmt chunk');
      return { riffSize: buf.readUInt32LE(4), ...fmt, dataOffset: offset + 8, dataSize: size };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error('no data chunk');
}

function peakAmplitude(bytes: Uint8Array, info: WavInfo): number {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let peak = 0;
  for (let i = info.dataOffset; i + 1 < info.dataOffset + info.dataSize; i += 2) {
    peak = Math.max(peak, Math.abs(buf.readInt16LE(i)));
  }
  return peak;
}

/** Seconds of audio in a 16-bit PCM WAV. */
function seconds(info: WavInfo): number {
  return info.dataSize / (info.sampleRate * info.channels * (info.bitsPerSample / 8));
}

async function failure(promise: Promise<unknown>): Promise<TroupeError> {
  try {
    await promise;
  } catch (error) {
    if (isTroupeError(error)) return error;
    throw error;
  }
  throw new Error('expected the promise to reject');
}

describe('espeak-ng synthesizer (real espeak-ng)', () => {
  const speech = createEspeakSynthesizer();

  it('produces a RIFF/WAVE buffer whose header sizes match its length and which is not silent', async () => {
    const result = await speech.synthesize({
      text: 'Hello from Troupe. This is a test of the speech adapter.',
    });
    expect(result.mediaType).toBe('audio/wav');
    expect(result.extension).toBe('wav');
    const info = parseWav(result.audio);
    expect(info.riffSize).toBe(result.audio.byteLength - 8);
    expect(info.dataOffset + info.dataSize).toBe(result.audio.byteLength);
    expect(info).toMatchObject({ channels: 1, bitsPerSample: 16, sampleRate: 22_050 });
    expect(seconds(info)).toBeGreaterThan(1);
    expect(peakAmplitude(result.audio, info)).toBeGreaterThan(1000);
  });

  it('speaks text that starts with "--help" instead of reading it as a flag', async () => {
    const result = await speech.synthesize({ text: '--help --version -w /tmp/owned.wav' });
    const info = parseWav(result.audio);
    expect(info.dataOffset + info.dataSize).toBe(result.audio.byteLength);
    expect(seconds(info)).toBeGreaterThan(1);
    expect(existsSync('/tmp/owned.wav')).toBe(false);
  });

  it('speaks quotes, semicolons and shell syntax as text (no shell is involved)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-espeak-'));
    const marker = join(dir, 'pwned');
    try {
      const text = `He said "hi"; it's fine'; $(touch ${marker}) \`touch ${marker}\` && touch ${marker} | cat`;
      const result = await speech.synthesize({ text });
      const info = parseWav(result.audio);
      expect(seconds(info)).toBeGreaterThan(1);
      expect(peakAmplitude(result.audio, info)).toBeGreaterThan(1000);
      expect(existsSync(marker)).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('uses the request voice over the default one', async () => {
    const text = 'The same words in two voices.';
    const a = await speech.synthesize({ text });
    const b = await speech.synthesize({ text, voiceId: 'en-us+f3' });
    expect(Buffer.from(b.audio).equals(Buffer.from(a.audio))).toBe(false);
    parseWav(b.audio);
  });

  it('clips over-long text at a word boundary to maxChars', async () => {
    const short = createEspeakSynthesizer({ maxChars: 20 });
    const long = await short.synthesize({ text: `${'word '.repeat(200)}end` });
    const reference = await speech.synthesize({ text: 'word word word word' });
    // 20 chars clip to four words: exactly what the reference says.
    expect(Buffer.from(long.audio).equals(Buffer.from(reference.audio))).toBe(true);
  });

  it('rejects empty and blank text with TROUPE_SPEECH_EMPTY', async () => {
    expect((await failure(speech.synthesize({ text: '' }))).code).toBe('TROUPE_SPEECH_EMPTY');
    expect((await failure(speech.synthesize({ text: ' \n\t ' }))).code).toBe('TROUPE_SPEECH_EMPTY');
  });

  it('rejects voice ids outside the safe pattern before running anything', async () => {
    for (const voiceId of ['en-us; rm -rf /', '--help', '../../etc/passwd', 'en us', '', 'a'.repeat(65)]) {
      const error = await failure(speech.synthesize({ text: 'hello', voiceId }));
      expect(error.code).toBe('TROUPE_SPEECH_INVALID_VOICE');
      expect(error.retryable).toBe(false);
    }
    expect(() => createEspeakSynthesizer({ voice: '-v' })).toThrow(/voice id/);
  });

  it('reports a voice espeak-ng does not have as TROUPE_SPEECH_INVALID_VOICE', async () => {
    const error = await failure(speech.synthesize({ text: 'hello', voiceId: 'xx-nope' }));
    expect(error.code).toBe('TROUPE_SPEECH_INVALID_VOICE');
  });

  it('reports a missing binary as TROUPE_SPEECH_UNAVAILABLE with the install command', async () => {
    const missing = createEspeakSynthesizer({ binary: '/nonexistent/espeak-ng' });
    const error = await failure(missing.synthesize({ text: 'hello' }));
    expect(error.code).toBe('TROUPE_SPEECH_UNAVAILABLE');
    expect(error.message).toContain('apt-get install espeak-ng');
    expect(error.retryable).toBe(false);
  });

  it('rejects an already-aborted signal without speaking', async () => {
    const error = await failure(speech.synthesize({ text: 'hello', signal: AbortSignal.abort() }));
    expect(error.code).toBe('TROUPE_SPEECH_ABORTED');
  });
});

describe('espeak-ng synthesizer (process control, with a stand-in binary)', () => {
  let dir = '';
  let sleeper = '';
  let failing = '';
  let pidFile = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'troupe-espeak-fake-'));
    pidFile = join(dir, 'pid');
    sleeper = join(dir, 'sleepy-espeak');
    await writeFile(sleeper, `#!/bin/sh\necho $$ > '${pidFile}'\nexec sleep 30\n`);
    failing = join(dir, 'broken-espeak');
    await writeFile(failing, '#!/bin/sh\necho "something broke" >&2\nexit 3\n');
    await chmod(sleeper, 0o755);
    await chmod(failing, 0o755);
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const readPid = async (): Promise<number | undefined> => {
    const text = await readFile(pidFile, 'utf8').catch(() => '');
    return text.trim() ? Number(text.trim()) : undefined;
  };
  /** Waits, however long a loaded machine takes (the test's timeout guards a hang), for the stand-in to start. */
  const waitForPid = async (): Promise<number> => {
    for (;;) {
      const pid = await readPid();
      if (pid !== undefined) return pid;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  const isAlive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it('kills the process when the signal aborts', async () => {
    await rm(pidFile, { force: true });
    const speech = createEspeakSynthesizer({ binary: sleeper, timeoutMs: 20_000 });
    const controller = new AbortController();
    const pending = failure(speech.synthesize({ text: 'a long story', signal: controller.signal }));
    const pid = await waitForPid();
    expect(isAlive(pid)).toBe(true);
    controller.abort();
    const error = await pending;
    expect(error.code).toBe('TROUPE_SPEECH_ABORTED');
    expect(isAlive(pid)).toBe(false);
  });

  it('kills the process on timeout and reports a retryable TROUPE_SPEECH_FAILED', async () => {
    await rm(pidFile, { force: true });
    const speech = createEspeakSynthesizer({ binary: sleeper, timeoutMs: 200 });
    const error = await failure(speech.synthesize({ text: 'a long story' }));
    expect(error.code).toBe('TROUPE_SPEECH_FAILED');
    expect(error.retryable).toBe(true);
    // On a loaded machine the timeout may come before the stand-in wrote its pid: then there is
    // nothing to look for; otherwise that process is gone.
    const pid = await readPid();
    if (pid !== undefined) expect(isAlive(pid)).toBe(false);
  });

  it('reports a non-zero exit as TROUPE_SPEECH_FAILED with the stderr text', async () => {
    const speech = createEspeakSynthesizer({ binary: failing });
    const error = await failure(speech.synthesize({ text: 'hello' }));
    expect(error.code).toBe('TROUPE_SPEECH_FAILED');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('exit code 3');
    expect(error.message).toContain('something broke');
  });
});

describe('repairWavSizes', () => {
  const header = (riff: number, data: number, samples: number): Buffer => {
    const buf = Buffer.alloc(44 + samples * 2);
    buf.write('RIFF', 0, 'latin1');
    buf.writeUInt32LE(riff, 4);
    buf.write('WAVEfmt ', 8, 'latin1');
    buf.writeUInt32LE(16, 16);
    buf.writeUInt16LE(1, 20);
    buf.writeUInt16LE(1, 22);
    buf.writeUInt32LE(22_050, 24);
    buf.writeUInt32LE(44_100, 28);
    buf.writeUInt16LE(2, 32);
    buf.writeUInt16LE(16, 34);
    buf.write('data', 36, 'latin1');
    buf.writeUInt32LE(data, 40);
    return buf;
  };

  it('replaces the placeholder sizes a pipe leaves with the real ones', () => {
    const fixed = repairWavSizes(header(0x7ffff024, 0x7ffff000, 100));
    const info = parseWav(fixed);
    expect(info.riffSize).toBe(fixed.length - 8);
    expect(info.dataSize).toBe(200);
  });

  it('drops a torn trailing byte and refuses what is not a WAV', () => {
    const torn = Buffer.concat([header(0, 0, 10), Buffer.from([1])]);
    expect(parseWav(repairWavSizes(torn)).dataSize).toBe(20);
    expect(() => repairWavSizes(Buffer.from('Usage: espeak-ng [options] [words]'))).toThrow(/not a RIFF/);
    expect(() => repairWavSizes(Buffer.alloc(0))).toThrow(/empty/);
    expect(() => repairWavSizes(header(0, 0, 0))).toThrow(/no samples/);
  });
});
