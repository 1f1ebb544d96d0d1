/** Shared fixtures for the language-model tests: an avatar, turns, requests and a log capture. */
import { pino } from 'pino';
import type { AvatarProfile, TurnClaim, TurnContext } from '../../src/floor/floorTypes.js';
import type { Logger } from '../../src/logging/logger.js';
import type { Prompt, TurnGenerationRequest } from '../../src/ports/model.js';

export const luna: AvatarProfile = {
  id: 'av-luna',
  name: 'Luna',
  aliases: ['Moony'],
  persona: 'A dreamy astronomer who names comets after her friends.',
  topics: ['stars', 'comets'],
};

export const rex: AvatarProfile = {
  id: 'av-rex',
  name: 'Rex',
  persona: 'A retired T. rex, grumpy about small arms.',
  topics: ['fossils'],
};

/** A turn claim for `avatar`, with context overrides. */
export function turnFor(
  avatar: AvatarProfile,
  overrides: Partial<Omit<TurnClaim, 'context'>> = {},
  context: Partial<TurnContext> = {},
): TurnClaim {
  return {
    turnId: 'c1:t1',
    channelId: 'c1',
    avatarId: avatar.id,
    kind: 'response',
    rung: 'mention',
    reason: 'mentioned by name',
    lane: 'main',
    anchorMessageId: 'm1',
    triggerMessageId: 'm1',
    claimedAt: 1_000,
    ...overrides,
    context: { presentNames: [], threadPartnerNames: [], closing: false, ...context },
  };
}

/** A plain prompt for adapter tests. */
export const samplePrompt: Prompt = {
  system: 'You are Luna. Keep it short.',
  messages: [{ role: 'user', name: 'Ada', content: 'Ada: Luna, what is the brightest star?' }],
};

/** A generation request for `avatar` (defaults: Luna, a response turn, {@link samplePrompt}). */
export function requestFor(
  avatar: AvatarProfile = luna,
  overrides: Partial<TurnGenerationRequest> = {},
): TurnGenerationRequest {
  return {
    channelKey: 'test:1',
    avatar,
    turn: turnFor(avatar),
    prompt: samplePrompt,
    situation: {
      avatarIds: [luna.id, rex.id],
      avatarNames: ['Luna', 'Moony', 'Rex'],
      spokenInThread: 0,
      greetingMaxChars: 150,
    },
    ...overrides,
  };
}

/** A pino logger at `info` whose JSON lines land in `lines`. */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  return { logger, lines };
}
