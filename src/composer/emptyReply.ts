/**
 * The reply to an `empty` envelope: what was not found, next steps (search advice, then an offer
 * to create or the manual path) and the "What I tried" footnote.
 */
import type { ReplyParts } from './composedReply.js';
import type { ComposerConfig } from './composerConfig.js';
import { emptyNextSteps } from './emptyNextSteps.js';
import type { EntityVocabulary } from './entityVocabulary.js';
import type { ToolResultEnvelope } from './envelope.js';
import { type LookupTarget, lookupTarget } from './lookupTarget.js';
import { whatITried } from './whatITried.js';

const article = (word: string) => (/^[aeiou]/iu.test(word) ? 'an' : 'a');

function notFound(target: LookupTarget, vocabulary: EntityVocabulary): string {
  const { singular, plural } = vocabulary;
  const filters = target.filters ? ` ${target.filters}` : '';
  if (target.orderNumber) {
    const named = target.typedName ? ` named “${target.typedName}”` : '';
    return `I couldn't find ${singular} ${target.orderNumber}${named}${filters}.`;
  }
  if (target.typedName)
    return `I couldn't find ${article(singular)} ${singular} named “${target.typedName}”${filters}.`;
  if (target.identifier)
    return `I couldn't find ${article(singular)} ${singular} with ${target.identifier.label} “${target.identifier.value}”${filters}.`;
  return `I couldn't find any ${plural}${filters}.`;
}

/** Summary, next steps and "What I tried" for an empty result. */
export function emptyReply(
  envelope: ToolResultEnvelope,
  vocabulary: EntityVocabulary,
  config: ComposerConfig,
): Pick<ReplyParts, 'summary' | 'nextSteps' | 'whatITried' | 'severity'> {
  const target = lookupTarget(envelope.query);
  const tried = whatITried(envelope.attempts);
  return {
    summary: notFound(target, vocabulary),
    nextSteps: emptyNextSteps(vocabulary, target, envelope.attempts, config),
    ...(tried.length > 0 ? { whatITried: tried } : {}),
    severity: 'warning',
  };
}
