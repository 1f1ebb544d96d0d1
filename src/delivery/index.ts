/**
 * Delivery policy, pure: how a turn's prompt is built, how what a model wrote becomes the one
 * OutgoingResponse (voice prefix, name labels, clipping), the feedback guarantee, and how text is
 * split to a transport's limit. No I/O; the runtime and adapters call these.
 * @packageDocumentation
 */
export { clipText } from './clipText.js';
export { ensureFeedback, FALLBACK_TEXT, type FeedbackDecision } from './feedbackGuarantee.js';
export { DEFAULT_HISTORY_CHARS, DEFAULT_HISTORY_LIMIT, historyMessages } from './historyMessages.js';
export { mentionBreaker, neutralizeMentions } from './neutralizeMentions.js';
export {
  type PreparationInput,
  type PreparationRequest,
  prepareOutgoingResponse,
  speakableText,
  userFacingErrorText,
  type VoicePolicy,
} from './preparation.js';
export {
  buildTurnPrompt,
  personaInstructions,
  presenceNote,
  type TurnPromptInput,
  threadNote,
  VOICE_NOTE,
} from './prompts.js';
export { cleanReplyText } from './replyText.js';
export { MIN_SPLIT_LENGTH, splitText } from './splitText.js';
export { splitVoicePrefix, type VoiceSplit } from './voicePrefix.js';
