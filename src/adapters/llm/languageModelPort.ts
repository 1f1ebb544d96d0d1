import type { AvatarProfile, TurnClaim } from '../../machines/floorTypes.js';

/** One message of a chat prompt. `name` is the speaker's display name, for multi-party chats. */
export interface PromptMessage {
  role: 'user' | 'assistant';
  content: string;
  name?: string;
}

/** A prompt ready for a chat model: system instructions and the conversation so far. */
export interface Prompt {
  system: string;
  messages: PromptMessage[];
}

/** The situation of a turn beyond the claim: what an offline model needs to stay in character. */
export interface TurnSituation {
  /** Ids of every avatar the runtime knows (to tell avatars from humans). */
  avatarIds: readonly string[];
  /** Names and aliases of every avatar (never echoed by accident: names are mentions). */
  avatarNames: readonly string[];
  /** Turns this avatar already delivered in the turn's thread. */
  spokenInThread: number;
  /** Longest greeting allowed (`config.greetingMaxChars`). */
  greetingMaxChars: number;
}

/**
 * A tool a model may call during one turn (the AI SDK's tool shape: a description, a zod input
 * schema, and `execute`).
 */
export interface TurnTool {
  description: string;
  inputSchema: unknown;
  execute: (input: never) => Promise<unknown>;
}

/** Everything a model is asked for one avatar turn. */
export interface TurnGenerationRequest {
  avatar: AvatarProfile;
  turn: TurnClaim;
  prompt: Prompt;
  situation: TurnSituation;
  /** Tools for this turn (models that cannot call tools ignore them). */
  tools?: Readonly<Record<string, TurnTool>>;
  signal?: AbortSignal;
}

/** Token counts, when the model reports them. */
export interface TokenUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
}

/** What a model wrote for a turn. */
export interface TurnGenerationResult {
  text: string;
  /** Avatar ids the reply mentions the platform way (offline model); empty for real models. */
  mentions: string[];
  /** True when the model asks for the reply to be spoken (voice prefix, or a voice tool). */
  voiceRequested?: boolean;
  /** `provider:model` that wrote it, e.g. `openai:gpt-4o-mini` or `offline:scripted`. */
  model: string;
  usage?: TokenUsage;
}

/**
 * The language-model port the runtime generates turns through. Implementations: the AI SDK
 * adapter (OpenAI, Anthropic, any OpenAI-compatible server) and the offline scripted model.
 * Failures are thrown as `TroupeError`s with codes `TROUPE_MODEL_*`.
 */
export interface TurnModel {
  /** `provider:model`, for logs and the start-up banner. */
  readonly id: string;
  /** True for the offline scripted model: the runtime says once that it is offline. */
  readonly offline: boolean;
  /**
   * False for a model that writes from the turn and situation alone and never reads the prompt
   * (the offline scripted model): the runtime then skips building one. Default true.
   */
  readonly readsPrompt?: boolean;
  generateTurn(request: TurnGenerationRequest): Promise<TurnGenerationResult>;
}
