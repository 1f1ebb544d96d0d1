import { z } from 'zod';
import { zodIssues } from '../config/zodIssues.js';
import { type Email, parseEmail } from './emailInput.js';
import { type TriageClassification, type TriageDecision, triageClassifications } from './triageDecision.js';

/** One labelled email of an evaluation set. */
export interface LabelledEmail {
  /** 1-based line in the file. */
  line: number;
  email: Email;
  label: TriageClassification;
}

/** A line that could not be used, and why. */
export interface EvalLineProblem {
  line: number;
  message: string;
}

const lineSchema = z.object({
  email: z.unknown(),
  label: z.enum(['ignore', 'notify', 'respond']),
});

/**
 * Reads an evaluation set: one JSON object per line, `{"email": <any input shape>, "label":
 * "ignore" | "notify" | "respond"}`. Blank lines are skipped; a line that does not parse or
 * validate is reported with its number and left out, and the rest are kept.
 */
export function parseEvalSet(text: string): { emails: LabelledEmail[]; problems: EvalLineProblem[] } {
  const emails: LabelledEmail[] = [];
  const problems: EvalLineProblem[] = [];
  // A byte-order mark (some editors write one) is not part of the first line's JSON.
  text
    .replace(/^\uFEFF/u, '')
    .split('\n')
    .forEach((raw, index) => {
      const line = index + 1;
      if (raw.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (error) {
        problems.push({ line, message: `not JSON (${(error as Error).message})` });
        return;
      }
      const row = lineSchema.safeParse(value);
      if (!row.success) {
        problems.push({
          line,
          message: zodIssues(row.error),
        });
        return;
      }
      const parsed = parseEmail(row.data.email);
      if (!parsed.ok) {
        problems.push({ line, message: parsed.error.message });
        return;
      }
      emails.push({ line, email: parsed.email, label: row.data.label });
    });
  return { emails, problems };
}

/** One email's result. */
export interface EvalResult {
  item: LabelledEmail;
  decision?: TriageDecision;
  /** Why there is no decision (the model failed). */
  error?: string;
}

/** Accuracy and the confusion matrix of a run. */
export interface EvalReport {
  total: number;
  correct: number;
  failed: number;
  accuracy: number;
  /** `matrix[label][predicted]`. */
  matrix: Record<TriageClassification, Record<TriageClassification, number>>;
  /** Precision is `null` for a class never decided, recall for one never labelled (no emails to count). */
  perClass: Record<
    TriageClassification,
    { precision: number | null; recall: number | null; support: number }
  >;
  /** Decisions made by rules, the offline router, or the model. */
  decidedBy: Record<TriageDecision['decidedBy'], number>;
  mistakes: EvalResult[];
}

/** Scores results against their labels. */
export function scoreEval(results: readonly EvalResult[]): EvalReport {
  const zero = () => ({ ignore: 0, notify: 0, respond: 0 });
  const matrix = { ignore: zero(), notify: zero(), respond: zero() };
  const decidedBy = { rule: 0, offline: 0, model: 0 };
  let correct = 0;
  let failed = 0;
  const mistakes: EvalResult[] = [];
  for (const r of results) {
    if (!r.decision) {
      failed += 1;
      mistakes.push(r);
      continue;
    }
    matrix[r.item.label][r.decision.classification] += 1;
    decidedBy[r.decision.decidedBy] += 1;
    if (r.decision.classification === r.item.label) correct += 1;
    else mistakes.push(r);
  }
  const perClass = {} as EvalReport['perClass'];
  for (const c of triageClassifications) {
    const predicted = triageClassifications.reduce((n, l) => n + matrix[l][c], 0);
    const support = triageClassifications.reduce((n, p) => n + matrix[c][p], 0);
    perClass[c] = {
      precision: predicted === 0 ? null : matrix[c][c] / predicted,
      recall: support === 0 ? null : matrix[c][c] / support,
      support,
    };
  }
  return {
    total: results.length,
    correct,
    failed,
    accuracy: results.length === 0 ? 0 : correct / results.length,
    matrix,
    perClass,
    decidedBy,
    mistakes,
  };
}

/** The report as a person reads it: accuracy, the confusion matrix, per-class figures, mistakes. */
export function formatEvalReport(report: EvalReport, router: string): string {
  const pct = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)}%`);
  const lines = [
    `Triage evaluation — ${report.total} emails, router: ${router}`,
    `Accuracy: ${pct(report.accuracy)} (${report.correct} of ${report.total})${report.failed > 0 ? `; ${report.failed} failed` : ''}`,
    `Decided by: ${report.decidedBy.rule} rule, ${report.decidedBy.offline} offline router, ${report.decidedBy.model} model`,
    '',
    'Confusion matrix (rows: label, columns: decision)',
    `${'label'.padEnd(10)}${triageClassifications.map((c) => c.padStart(9)).join('')}`,
    ...triageClassifications.map(
      (l) =>
        `${l.padEnd(10)}${triageClassifications.map((p) => String(report.matrix[l][p]).padStart(9)).join('')}`,
    ),
    '',
    `${'class'.padEnd(10)}${'precision'.padStart(11)}${'recall'.padStart(9)}${'emails'.padStart(8)}`,
    ...triageClassifications.map((c) => {
      const s = report.perClass[c];
      return `${c.padEnd(10)}${pct(s.precision).padStart(11)}${pct(s.recall).padStart(9)}${String(s.support).padStart(8)}`;
    }),
  ];
  if (report.mistakes.length > 0) {
    lines.push('', 'Mistakes:');
    for (const m of report.mistakes) {
      const subject = m.item.email.subject.replace(/\s+/gu, ' ').slice(0, 60);
      lines.push(
        m.decision
          ? `  line ${m.item.line}: “${subject}” is ${m.item.label}, decided ${m.decision.classification} — ${m.decision.reasoning}`
          : `  line ${m.item.line}: “${subject}” failed — ${m.error ?? 'no decision'}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
