/**
 * Next steps for an empty result ("Capabilities-driven guidance"): advice to search
 * differently, then either an offer to create the missing record (its capability is on) or the
 * manual path in the application (it is off). Types without a capability (purchase orders) get
 * search advice only.
 */
import type { ComposerConfig } from './composerConfig.js';
import { canCreate, type EntityVocabulary } from './entityVocabulary.js';
import type { EnvelopeAttempts } from './envelope.js';
import type { LookupTarget } from './lookupTarget.js';

function searchAdvice(vocabulary: EntityVocabulary, target: LookupTarget): string[] {
  switch (vocabulary.type) {
    case 'vendor':
    case 'customer':
      return ['Check the spelling, or search by another detail such as the city or contact person.'];
    case 'part':
      return ['Check the spelling or the part number, or search by category instead.'];
    case 'purchase_order':
      return [
        target.orderNumber
          ? `Double-check the order number “${target.orderNumber}”.`
          : 'Double-check the order number, or give it if you have one.',
        'Or search by vendor or status instead (for example, “open purchase orders for <vendor name>”).',
      ];
    default:
      return ['Check the spelling, or search by another detail.'];
  }
}

/**
 * What the user can do after an empty result.
 *
 * - When no partial (fuzzy) match ran and a name was given, the first step recommends a longer or
 *   more specific name (the specified rule); otherwise a type-specific search hint comes first.
 * - When a name was given and the type has a capability: an offer to create it (capability on)
 *   or the manual "Add New" path (capability off).
 */
export function emptyNextSteps(
  vocabulary: EntityVocabulary,
  target: LookupTarget,
  attempts: EnvelopeAttempts,
  config: ComposerConfig,
): string[] {
  const steps: string[] = [];
  const name = target.typedName;
  if (!attempts.fuzzy && name !== undefined) steps.push(`Try a longer or more specific name than “${name}”.`);
  else steps.push(...searchAdvice(vocabulary, target));
  if (name !== undefined && vocabulary.capability !== undefined) {
    if (canCreate(vocabulary, config))
      steps.push(
        `Want me to create the ${vocabulary.singular} “${name}”? Say “create ${vocabulary.singular} ${name}”.`,
      );
    else if (vocabulary.addNewPath)
      steps.push(`If “${name}” is a new ${vocabulary.singular}, add it in ${vocabulary.addNewPath}.`);
  }
  return steps;
}
