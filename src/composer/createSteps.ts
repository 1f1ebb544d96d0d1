/**
 * The replies of a create flow before anything is written: the question for a required field, the
 * row about to be inserted, the end of a cancelled flow, and the refusal when the capability is
 * off. The outcome of the insert itself is an envelope, composed by `compose()`.
 */
import type { ReplyParts } from './composedReply.js';
import { type ComposerConfigOptions, resolveComposerConfig } from './composerConfig.js';
import { canCreate, vocabularyFor } from './entityVocabulary.js';
import { labelInSentence, quoteable } from './formatValue.js';
import { neutralizeParts } from './neutralizeParts.js';
import { renderText } from './renderText.js';
import { buildTablePreview } from './tablePreview.js';

/** One step of a create flow. */
export type CreateStep =
  | { kind: 'ask'; entityType: string; name: string | undefined; column: string }
  | { kind: 'confirm'; entityType: string; values: Readonly<Record<string, string>> }
  | { kind: 'cancelled'; entityType: string }
  | { kind: 'refused'; entityType: string };

/** A step's reply: the text for a plain channel, and the same in parts. */
export interface ComposedStep {
  text: string;
  parts: ReplyParts;
}

/** How to answer the confirmation (the words {@link readCreateReply} understands), in general. */
export const confirmPrompt =
  'Create it? Say “yes”, “no”, or correct a field (for example “phone is 555-0100”).';

/** {@link confirmPrompt} with an example field of the row shown (a part has no phone). */
function confirmPromptFor(values: Readonly<Record<string, string>>): string {
  const column = Object.keys(values).at(-1);
  if (column === undefined) return confirmPrompt;
  return `Create it? Say “yes”, “no”, or correct a field (for example “${labelInSentence(column)} is …”).`;
}

function stepParts(step: CreateStep): ReplyParts {
  const vocabulary = vocabularyFor(step.entityType);
  const { singular, plural } = vocabulary;
  switch (step.kind) {
    case 'ask': {
      const named = step.name === undefined ? '' : ` “${quoteable(step.name)}”`;
      return {
        summary: `To create the ${singular}${named}, I need its ${labelInSentence(step.column)}.`,
        prompt: `What is its ${labelInSentence(step.column)}? (Say “cancel” to stop.)`,
        severity: 'info',
      };
    }
    case 'confirm':
      return {
        summary: `This is the ${singular} I'll create:`,
        table: buildTablePreview([step.values], 1, 1),
        prompt: confirmPromptFor(step.values),
        severity: 'info',
      };
    case 'cancelled':
      return { summary: `OK, I won't create the ${singular}. Nothing was saved.`, severity: 'info' };
    case 'refused':
      return {
        summary: `I'm not set up to create ${plural}, so I haven't created anything.`,
        nextSteps: [
          vocabulary.addNewPath
            ? `Add it in ${vocabulary.addNewPath}.`
            : `Add it in the application where ${plural} are kept.`,
        ],
        severity: 'warning',
        errorCategory: 'permissions',
      };
  }
}

/** Composes one step of a create flow (data from the person is clipped and neutralised like any). */
export function composeCreateStep(step: CreateStep): ComposedStep {
  const parts = neutralizeParts(stepParts(step));
  return { text: renderText(parts), parts };
}

/**
 * Whether the capability (`AGENT_CAN_CREATE_VENDOR|CUSTOMER|PART`) lets the agent create records
 * of `entityType`, read now from `options` like every composition.
 */
export function mayCreate(entityType: string, options: ComposerConfigOptions = {}): boolean {
  return canCreate(vocabularyFor(entityType), resolveComposerConfig(options).config);
}
