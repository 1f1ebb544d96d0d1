/** Audio made from text. */
export interface SynthesizedSpeech {
  audio: Uint8Array;
  /** e.g. `audio/wav`, `audio/mpeg`. */
  mediaType: string;
  /** File name extension without the dot, e.g. `wav`. */
  extension: string;
}

/** Options for one synthesis. */
export interface SpeechRequest {
  text: string;
  /** Engine-specific voice name (espeak-ng: `en-us`; OpenAI: `alloy`). */
  voiceId?: string;
  signal?: AbortSignal;
}

/**
 * The text-to-speech port routing uses to turn a voice request into audio. Implementations throw
 * `TroupeError`s with codes `TROUPE_SPEECH_*`; routing then sends the text instead.
 */
export interface SpeechSynthesizer {
  readonly id: string;
  /** True when synthesis runs on this machine and always ends (espeak-ng); otherwise it counts as external. */
  readonly local?: boolean;
  synthesize(request: SpeechRequest): Promise<SynthesizedSpeech>;
}
