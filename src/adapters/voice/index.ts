export { type AiSdkSynthesizerOptions, createAiSdkSynthesizer } from './aiSdkSynthesizer.js';
export {
  createEspeakSynthesizer,
  type EspeakSynthesizerOptions,
  repairWavSizes,
} from './espeakSynthesizer.js';
export { speechFromEnv, speechSettings } from './speechFromEnv.js';
export type { SpeechRequest, SpeechSynthesizer, SynthesizedSpeech } from './speechSynthesizer.js';
export { checkVoiceId, clipAtWordBoundary, prepareSpeechText, VOICE_ID_PATTERN } from './speechText.js';
