import type { TurnGenerationRequest, TurnGenerationResult, TurnModel } from '../../ports/model.js';
import { scriptedReply } from './scriptedReplies.js';

/** Id of the offline scripted model, as logs and the start-up banner show it. */
export const SCRIPTED_MODEL_ID = 'offline:scripted';

/**
 * The offline model: writes every turn with the simulator's {@link scriptedReply}, in character
 * (persona and topics), deterministically (the same request always gives the same text) and with
 * no latency. Greetings keep to the turn's `maxChars` (or the situation's `greetingMaxChars`,
 * whichever is smaller). Unlike a real model it returns the avatar ids it mentions, the platform
 * way, so bot-to-bot conversations happen offline too. The prompt is not read.
 */
export function createScriptedModel(): TurnModel {
  // The runtime hands every turn the same array of avatar ids: its test is made once.
  const idTests = new WeakMap<readonly string[], (id: string) => boolean>();
  const isAvatarOf = (ids: readonly string[]) => {
    let test = idTests.get(ids);
    if (!test) {
      const set = new Set(ids);
      test = (id: string) => set.has(id);
      idTests.set(ids, test);
    }
    return test;
  };
  return {
    id: SCRIPTED_MODEL_ID,
    offline: true,
    readsPrompt: false,
    async generateTurn(request: TurnGenerationRequest): Promise<TurnGenerationResult> {
      const { avatar, turn, situation } = request;
      const isAvatar = isAvatarOf(situation.avatarIds);
      const greetingMaxChars = Math.min(
        situation.greetingMaxChars,
        turn.context.maxChars ?? Number.POSITIVE_INFINITY,
      );
      const reply = scriptedReply({
        turn,
        avatar,
        isAvatar,
        greetingMaxChars,
        spokenInThread: situation.spokenInThread,
        avatarNames: situation.avatarNames,
      });
      return { text: reply.text, mentions: reply.mentions, model: SCRIPTED_MODEL_ID };
    },
  };
}
