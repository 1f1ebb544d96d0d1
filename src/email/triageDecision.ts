/** How an email is handled (three classes). */
export type TriageClassification = 'ignore' | 'notify' | 'respond';

/** The classes, in the order reports list them. */
export const triageClassifications: readonly TriageClassification[] = ['ignore', 'notify', 'respond'];

/** A triage decision with its reasoning and what made it. */
export interface TriageDecision {
  classification: TriageClassification;
  reasoning: string;
  /** `rule`: a sender or subject rule; `offline`: the offline router; `model`: the language model. */
  decidedBy: 'rule' | 'offline' | 'model';
  /** The version of the triage preferences it was decided from, when they came from memory. */
  profileVersion?: number;
}
