import type { ChannelRef, OutgoingResponse, ResponseOrigin, Speaker } from '../ports/outgoingResponse.js';
import { clipText } from './clipText.js';
import { cleanReplyText } from './replyText.js';

/** When a reply is spoken as well as written. */
export interface VoicePolicy {
  /**
   * `off`: never; `on-request`: when the model asks (a `[voice]` prefix) or the person spoke a
   * voice note (answer in kind); `always`: every answer.
   */
  mode: 'off' | 'on-request' | 'always';
}

/** What the preparation step knows about the turn it prepares a response for. */
export interface PreparationRequest {
  idempotencyKey: string;
  channel: ChannelRef;
  speaker?: Speaker;
  replyTo?: { messageId: string };
  origin: Omit<ResponseOrigin, 'kind'>;
  /** The person's message came as a voice note. */
  inboundVoice?: boolean;
  /** The speaker's preferred voice (engine-specific id). */
  voiceId?: string;
  voicePolicy: VoicePolicy;
  /**
   * The speaker's own names (name and aliases): a reply that starts with one as a label
   * (`Luna: …`, copied from the history format) has it dropped. Default: the speaker's name.
   */
  speakerNames?: readonly string[];
  /** Longest text this turn may deliver (greetings); a longer reply is cut at a word. */
  maxChars?: number;
  at: number;
}

/** The canonical inputs of preparation: at most one of them decides the response. */
export interface PreparationInput {
  /** An upstream system already decided what to send: it is left alone. */
  existing?: OutgoingResponse;
  /**
   * What the model wrote, as written: a `[voice]` prefix and a label with the speaker's own name
   * are handled here, the one place for every model. `voiceRequested` is for models that ask
   * another way (a voice tool).
   */
  generation?: { text: string; voiceRequested?: boolean };
  /** Why generation failed. Only the code is used: raw messages never reach users. */
  error?: { code: string };
  request: PreparationRequest;
}

/**
 * The messages a person sees when generation fails, by error code. Short, in the avatar's voice,
 * never a stack trace or a provider's raw text.
 */
export function userFacingErrorText(code: string): string {
  switch (code) {
    case 'TROUPE_MODEL_TIMEOUT':
      return 'Sorry, I took too long to think that through. Could you ask me again in a moment?';
    case 'TROUPE_MODEL_RATE_LIMITED':
      return "I'm getting a lot of requests right now. Please try again in a minute.";
    case 'TROUPE_MODEL_UNAVAILABLE':
      return "I can't reach my language model right now. Please try again shortly.";
    case 'TROUPE_MODEL_AUTH':
      return "I'm not set up correctly: my model credentials were refused. Please let whoever runs me know.";
    default:
      return 'Something went wrong while I was writing my reply. Please try again.';
  }
}

/**
 * The preparation actor's step (`OutgoingResponsePreparationSystem`): makes the one
 * {@link OutgoingResponse} transport will consume, or nothing when there is nothing to say.
 *
 * - An existing response is returned untouched: upstream already decided.
 * - A generation error becomes a user-friendly message chosen by its code.
 * - A generation becomes an answer; the voice policy decides whether it is also spoken.
 *
 * Pure: it sends nothing and writes no history.
 */
export function prepareOutgoingResponse(input: PreparationInput): OutgoingResponse | undefined {
  if (input.existing) return input.existing;
  const { request } = input;
  if (input.error) return responseOf(request, userFacingErrorText(input.error.code), undefined, 'error');
  if (!input.generation) return undefined;
  // A model that wrote the prefix itself asked to be heard.
  const split = cleanReplyText(
    input.generation.text,
    request.speakerNames ?? (request.speaker ? [request.speaker.name] : []),
  );
  const trimmed = split.text;
  const text = request.maxChars === undefined ? trimmed : clipText(trimmed, request.maxChars);
  if (text === '') return undefined;
  const asked = split.voiceRequested || input.generation.voiceRequested === true;
  const speak =
    request.voicePolicy.mode === 'always' ||
    (request.voicePolicy.mode === 'on-request' && (asked || request.inboundVoice === true));
  const voice = speak
    ? request.voiceId
      ? { text: speakableText(text), voiceId: request.voiceId }
      : { text: speakableText(text) }
    : undefined;
  return responseOf(request, text, voice, 'answer');
}

/**
 * The response for a request, built by assignment (one is made for every turn), its keys in the
 * order they always had.
 */
function responseOf(
  request: PreparationRequest,
  text: string,
  voice: OutgoingResponse['voice'],
  kind: 'answer' | 'error',
): OutgoingResponse {
  const response = { idempotencyKey: request.idempotencyKey, channel: request.channel } as OutgoingResponse;
  if (request.speaker) response.speaker = request.speaker;
  if (request.replyTo) response.replyTo = request.replyTo;
  response.attachments = [];
  response.preparedAt = request.at;
  response.text = text;
  if (voice) response.voice = voice;
  response.origin = { ...request.origin, kind };
  return response;
}

/** Text for speech: markdown emphasis, code ticks and links read badly aloud. */
export function speakableText(text: string): string {
  return text
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/\[([^\]]+)\]\([^)]+\)/g, '$1')
    .replace(/[*_`~]+/g, '')
    .replace(/<@!?[\w-]+>/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}
