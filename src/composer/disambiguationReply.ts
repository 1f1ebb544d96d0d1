/**
 * The reply to a `disambiguation` envelope: numbered options (at most the configured limit), each
 * with its display name and light context, a prompt to pick one, and the total when more exist.
 */
import type { ReplyChoice, ReplyParts } from './composedReply.js';
import type { ComposerConfig } from './composerConfig.js';
import { countOf, type EntityVocabulary } from './entityVocabulary.js';
import type { EnvelopeCandidate, ToolResultEnvelope } from './envelope.js';
import { fieldPhrase } from './fieldPhrases.js';
import { formatValue } from './formatValue.js';
import { lookupTarget, matchingPhrase } from './lookupTarget.js';

/** Most context phrases shown with one option. */
export const maxContextPhrases = 3;

/** How the user is asked to pick; `resolveChoiceReply` in the machines understands both answers. */
export const choicePrompt = 'Reply with a number, or the exact name.';

function contextOf(candidate: EnvelopeCandidate, withId: boolean): string {
  const phrases = Object.entries(candidate)
    .filter(([key]) => key !== 'id' && key !== 'display_name')
    .map(([key, value]) => fieldPhrase(key, value, 40))
    .filter((phrase): phrase is string => phrase !== undefined)
    .slice(0, maxContextPhrases);
  if (withId) phrases.push(`ID ${formatValue('id', candidate.id, 40)}`);
  return phrases.join(', ');
}

/**
 * Summary, choices and prompt for a disambiguation. `choicesTotal` is the larger of the number of
 * candidates and `candidates_total`. Options that share a display name also show their id.
 */
export function disambiguationReply(
  envelope: ToolResultEnvelope,
  vocabulary: EntityVocabulary,
  config: ComposerConfig,
): Pick<ReplyParts, 'summary' | 'choices' | 'choicesTotal' | 'prompt' | 'severity'> {
  const candidates = envelope.candidates ?? [];
  const total = Math.max(candidates.length, envelope.candidates_total ?? 0);
  const shown = candidates.slice(0, config.disambiguationLimit);
  const labels = shown.map((c) => formatValue('display_name', c.display_name, 80));
  const choices: ReplyChoice[] = shown.map((candidate, i) => {
    const label = labels[i] ?? '';
    const duplicate =
      labels.filter((l) => l.toLocaleLowerCase('en') === label.toLocaleLowerCase('en')).length > 1;
    return { number: i + 1, id: candidate.id, label, context: contextOf(candidate, duplicate) };
  });
  const matching = matchingPhrase(lookupTarget(envelope.query), envelope.match === 'fuzzy');
  return {
    summary: `I found ${countOf(total, vocabulary)}${matching} — which one did you mean?`,
    choices,
    choicesTotal: total,
    prompt: choicePrompt,
    severity: 'info',
  };
}
