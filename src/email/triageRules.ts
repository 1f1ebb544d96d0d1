import type { Email } from './emailInput.js';
import type { TriageDecision } from './triageDecision.js';
import type { TriageRule } from './triagePreferences.js';

const fold = (s: string) => s.normalize('NFKC').toLocaleLowerCase('en');

/**
 * The first rule whose sender and subject parts (any case) both match, as a decision that says
 * which rule decided it; `undefined` when none does.
 */
export function applyTriageRules(email: Email, rules: readonly TriageRule[]): TriageDecision | undefined {
  const from = fold(email.from);
  const subject = fold(email.subject);
  for (const rule of rules) {
    if (rule.from !== undefined && !from.includes(fold(rule.from))) continue;
    if (rule.subject !== undefined && !subject.includes(fold(rule.subject))) continue;
    const parts = [
      rule.from !== undefined ? `the sender contains “${rule.from}”` : undefined,
      rule.subject !== undefined ? `the subject contains “${rule.subject}”` : undefined,
    ].filter((p) => p !== undefined);
    return {
      classification: rule.classification,
      reasoning: `Rule: ${parts.join(' and ')}${rule.reason ? ` (${rule.reason})` : ''}, so ${rule.classification}; no model was asked.`,
      decidedBy: 'rule',
    };
  }
  return undefined;
}
