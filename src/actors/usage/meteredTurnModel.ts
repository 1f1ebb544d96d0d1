import type { Clock } from '../../ports/clock.js';
import type {
  TurnGenerationRequest,
  TurnGenerationResult,
  TurnKindBrief,
  TurnModel,
} from '../../ports/model.js';
import type { UsagePurpose } from '../../ports/usage.js';
import type { UsageLedger } from './usageLedger.js';

const purposeOf: Record<TurnKindBrief, UsagePurpose> = {
  response: 'turn',
  greeting: 'greeting',
  'follow-up': 'follow-up',
};

/**
 * `model` with every successful turn recorded in `ledger`: the avatar, the channel, the purpose
 * (its answer, greeting or follow-up), the model that wrote it, the tokens it reported and the
 * characters it wrote. The request goes to `model` as it came (the runtime hands a model that
 * does not read the prompt a request whose signal is made only when read), and `id`, `offline`,
 * `local` and `readsPrompt` are the model's own. A failed call records nothing.
 */
export function meteredTurnModel(model: TurnModel, ledger: UsageLedger, clock: Clock): TurnModel {
  const record = (request: TurnGenerationRequest, result: TurnGenerationResult) => {
    ledger.record({
      at: clock.now(),
      model: result.model,
      spender: { kind: 'avatar', id: request.avatar.id },
      scope: request.channelKey,
      purpose: purposeOf[request.turn.kind] ?? 'turn',
      inputTokens: result.usage?.inputTokens,
      outputTokens: result.usage?.outputTokens,
      characters: result.text.length,
    });
    return result;
  };
  return {
    id: model.id,
    offline: model.offline,
    ...(model.local !== undefined ? { local: model.local } : {}),
    ...(model.readsPrompt !== undefined ? { readsPrompt: model.readsPrompt } : {}),
    generateTurn(request: TurnGenerationRequest): Promise<TurnGenerationResult> {
      return model.generateTurn(request).then((result) => record(request, result));
    },
  };
}
