/**
 * Who the model speaks as: the avatar's name, other names, persona and topics. Nothing else of
 * the runtime's avatar definition reaches a model.
 */
export interface ModelPersona {
  /** Stable id (platform mentions carry it). */
  id: string;
  /** Display name. */
  name: string;
  emoji?: string | undefined;
  /** Other names the avatar answers to. */
  aliases?: string[] | undefined;
  /** A sentence or two of persona. */
  persona?: string | undefined;
  /** Topics the avatar cares about. */
  topics?: string[] | undefined;
}

/** What kind of utterance a turn is: an answer, a summon greeting, or a summon follow-up. */
export type TurnKindBrief = 'response' | 'greeting' | 'follow-up';

/**
 * What a generator needs to know about the moment a turn was granted: who addressed the avatar,
 * who else is present, where it stands in its thread. The coordination core's own bookkeeping
 * (ladder rung, budget lane, anchors) stays behind.
 */
export interface TurnBriefContext {
  /** The words being answered, if any. */
  triggerText?: string | undefined;
  /** Name of whoever wrote the message being answered. */
  addressedByName?: string | undefined;
  addressedById?: string | undefined;
  /** Other avatars present in the channel (names). */
  presentNames: string[];
  /** Other participants of the thread (names), if the turn is in a thread. */
  threadPartnerNames: string[];
  /** 1-based turn number within the thread once delivered, and the thread's limit. */
  threadTurn?: number | undefined;
  threadMaxTurns?: number | undefined;
  /** True when this is the last turn the budget or thread allows: wrap up rather than ask. */
  closing: boolean;
  /** Longest text this turn may deliver (greetings). */
  maxChars?: number | undefined;
  /** A greeting of an avatar that was already present when summoned: acknowledge being called. */
  alreadyPresent?: true | undefined;
  /** The thread's mood so far, from a light sentiment estimate of its turns. */
  threadMood?: 'warm' | 'tense' | 'neutral' | undefined;
}

/** One turn as a model sees it. */
export interface TurnBrief {
  /** Unique per channel; a deterministic model may seed on it. */
  turnId: string;
  kind: TurnKindBrief;
  /** The thread this turn belongs to, if any. */
  threadId?: string | undefined;
  /** The message being answered, if any (to tell whether the history already holds it). */
  triggerMessageId?: string | undefined;
  context: TurnBriefContext;
}

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
  /** The channel the turn is spoken in (`kind:id`), for logs and per-channel policies. */
  channelKey: string;
  /** Who speaks. */
  avatar: ModelPersona;
  /** The turn, as a brief (never the coordination core's claim). */
  turn: TurnBrief;
  prompt: Prompt;
  situation: TurnSituation;
  /** Tools for this turn (models that cannot call tools ignore them). */
  tools?: Readonly<Record<string, TurnTool>>;
  signal?: AbortSignal | undefined;
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
   * True when a call never leaves the process and always ends (an offline model is local without
   * saying so). Otherwise a call counts as external: a test runtime waits for it only so long
   * without an answer (`settleLimitMs`).
   */
  readonly local?: boolean;
  /**
   * False for a model that writes from the turn and situation alone and never reads the prompt
   * (the offline scripted model): the runtime then skips building one. Default true.
   */
  readonly readsPrompt?: boolean;
  generateTurn(request: TurnGenerationRequest): Promise<TurnGenerationResult>;
}

/**
 * Builds the model an avatar's `model:` names (`provider:model`, `offline` or a profile name),
 * once per distinct choice when the runtime starts. Throws a `TroupeError` saying what is wrong
 * with the choice (an unknown provider or profile, a provider without its key); the runtime
 * names the avatar.
 */
export type TurnModelResolver = (choice: string) => TurnModel;
