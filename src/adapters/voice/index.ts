/**
 * `troupe/voice`: text to speech for voice replies — espeak-ng (offline) and AI SDK speech
 * models — chosen from the environment or built directly.
 * @packageDocumentation
 */
export { type AiSdkSynthesizerOptions, createAiSdkSynthesizer } from './aiSdkSynthesizer.js';
export {
  createEspeakSynthesizer,
  type EspeakSynthesizerOptions,
  repairWavSizes,
} from './espeakSynthesizer.js';
export { speechFromEnv, speechSettings } from './speechFromEnv.js';
export { checkVoiceId, clipAtWordBoundary, prepareSpeechText, VOICE_ID_PATTERN } from './speechText.js';
