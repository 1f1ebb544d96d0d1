import type { AvatarDefinitionInput } from '../actors/avatarDefinition.js';
import type { Scenario } from '../simulator/scenario.js';

/**
 * A scenario's avatars as runtime definitions, in the channel `terminal:<scenario.channel>`:
 * those marked `present` live there. `troupe tour` plays them; `troupe studio` puts them in its
 * playground.
 */
export function scenarioAvatars(scenario: Scenario): AvatarDefinitionInput[] {
  const channelKey = `terminal:${scenario.channel}`;
  return scenario.avatars.map((a) => ({
    id: a.id,
    name: a.name,
    ...(a.emoji !== undefined ? { emoji: a.emoji } : {}),
    ...(a.aliases !== undefined ? { aliases: a.aliases } : {}),
    ...(a.persona !== undefined ? { persona: a.persona } : {}),
    ...(a.topics !== undefined ? { topics: a.topics } : {}),
    residentIn: a.present ? [channelKey] : [],
    ...(a.tools ? { tools: a.tools } : {}),
    ...(a.model !== undefined ? { model: a.model } : {}),
  }));
}
