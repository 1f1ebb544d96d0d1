import type { TurnGenerationResult, TurnModel, TurnSituation } from '../adapters/llm/languageModelPort.js';
import { buildTurnPrompt } from '../adapters/llm/prompts.js';
import type { AvatarProfile, TurnClaim } from '../machines/floorTypes.js';
import type { HistoryEntry, HistoryStore } from './historyStore.js';

/** What the turn executor needs. */
export interface TurnExecutorOptions {
  model: TurnModel;
  history: HistoryStore;
  /** How many recent channel messages a prompt carries (default 30). */
  historyLimit?: number;
}

/**
 * The domain executor of a channel's conversation: it writes turns with the model and owns the
 * channel's history (DESIGN invariant 3). People's messages are written when they arrive, an
 * avatar's reply once it was delivered; error messages and the feedback guarantee's fallback are
 * never written, because nobody said them.
 */
export class TurnExecutor {
  private readonly historyLimit: number;

  constructor(private readonly options: TurnExecutorOptions) {
    this.historyLimit = options.historyLimit ?? 30;
  }

  /** The model turns are written with. */
  get model(): TurnModel {
    return this.options.model;
  }

  /** Writes one turn: the prompt carries persona, recent history, the thread and who is present. */
  async generate(input: {
    channelKey: string;
    avatar: AvatarProfile;
    turn: TurnClaim;
    situation: TurnSituation;
    signal?: AbortSignal;
  }): Promise<TurnGenerationResult> {
    const history = await this.options.history.recent(input.channelKey, this.historyLimit);
    const prompt = buildTurnPrompt({
      avatar: input.avatar,
      turn: input.turn,
      history,
      presentNames: input.turn.context.presentNames,
      historyLimit: this.historyLimit,
    });
    return this.options.model.generateTurn({
      avatar: input.avatar,
      turn: input.turn,
      prompt,
      situation: input.situation,
      ...(input.signal ? { signal: input.signal } : {}),
    });
  }

  /** Records a message someone wrote in the channel. */
  recordInbound(entry: HistoryEntry): Promise<void> {
    return this.options.history.append(entry);
  }

  /** Records an avatar's reply that the transport delivered. */
  recordDelivered(entry: HistoryEntry): Promise<void> {
    return this.options.history.append(entry);
  }
}
