/**
 * The triage evaluation a person runs on their own labelled emails: which lines of the set are
 * used (and why the others are not), the scores, and the report exactly as printed.
 */
import { describe, expect, it } from 'vitest';
import { type EvalResult, formatEvalReport, parseEvalSet, scoreEval } from '../../src/email/triageEval.js';

const mail = (subject: string) => ({ from: 'a@acme.dev', to: 'sam@acme.dev', subject, body: 'x' });
const line = (subject: string, label: string) => JSON.stringify({ email: mail(subject), label });

describe('reading an evaluation set', () => {
  it('keeps every good line with its number, skips blank ones, and reports the others by line', () => {
    const { emails, problems } = parseEvalSet(
      [
        line('One', 'ignore'),
        '',
        '{not json',
        JSON.stringify({ email: mail('Two'), label: 'urgent' }),
        JSON.stringify([1]),
        JSON.stringify({ email: { hello: 1 }, label: 'notify' }),
        '   ',
        line('Three', 'respond'),
      ].join('\n'),
    );
    expect(emails.map((e) => [e.line, e.email.subject, e.label])).toEqual([
      [1, 'One', 'ignore'],
      [8, 'Three', 'respond'],
    ]);
    expect(problems.map((p) => p.line)).toEqual([3, 4, 5, 6]);
    expect(problems[0]?.message).toMatch(/^not JSON \(/u);
    expect(problems[1]?.message).toMatch(/^label: /u);
    expect(problems[2]?.message).toMatch(/^\(root\): /u);
    expect(problems[3]?.message).toMatch(/^This email cannot be read: /u);
  });
});

describe('scoring and the report', () => {
  const items = parseEvalSet(
    [
      line('Newsletter', 'ignore'),
      line('Build failed', 'notify'),
      line('Question', 'respond'),
      line('Another question', 'respond'),
      line('A   very   long   subject that goes on and on past sixty characters for sure', 'notify'),
    ].join('\n'),
  ).emails;
  const [news, build, question, another, long] = items as [
    EvalResult['item'],
    EvalResult['item'],
    EvalResult['item'],
    EvalResult['item'],
    EvalResult['item'],
  ];
  const results: EvalResult[] = [
    { item: news, decision: { classification: 'ignore', reasoning: 'rule', decidedBy: 'rule' } },
    { item: build, decision: { classification: 'respond', reasoning: 'looks urgent', decidedBy: 'model' } },
    {
      item: question,
      decision: { classification: 'respond', reasoning: 'a question', decidedBy: 'offline' },
    },
    { item: another, decision: { classification: 'respond', reasoning: 'a question', decidedBy: 'model' } },
    { item: long, error: 'TROUPE_MODEL_FAILED: timeout' },
  ];

  it('counts correct, failed, who decided, the matrix, and precision and recall per class', () => {
    const report = scoreEval(results);
    expect(report).toMatchObject({
      total: 5,
      correct: 3,
      failed: 1,
      accuracy: 0.6,
      decidedBy: { rule: 1, offline: 1, model: 2 },
      matrix: {
        ignore: { ignore: 1, notify: 0, respond: 0 },
        notify: { ignore: 0, notify: 0, respond: 1 },
        respond: { ignore: 0, notify: 0, respond: 2 },
      },
      perClass: {
        ignore: { precision: 1, recall: 1, support: 1 },
        notify: { precision: null, recall: 0, support: 1 },
        respond: { precision: 2 / 3, recall: 1, support: 2 },
      },
    });
    expect(report.mistakes.map((m) => m.item.line)).toEqual([2, 5]);
    expect(scoreEval([])).toMatchObject({ total: 0, accuracy: 0, correct: 0, failed: 0 });
  });

  it('prints the report a person reads', () => {
    expect(formatEvalReport(scoreEval(results), 'openai:gpt-test')).toBe(
      [
        'Triage evaluation — 5 emails, router: openai:gpt-test',
        'Accuracy: 60.0% (3 of 5); 1 failed',
        'Decided by: 1 rule, 1 offline router, 2 model',
        '',
        'Confusion matrix (rows: label, columns: decision)',
        'label        ignore   notify  respond',
        'ignore            1        0        0',
        'notify            0        0        1',
        'respond           0        0        2',
        '',
        'class       precision   recall  emails',
        'ignore         100.0%   100.0%       1',
        'notify            n/a     0.0%       1',
        'respond         66.7%   100.0%       2',
        '',
        'Mistakes:',
        '  line 2: “Build failed” is notify, decided respond — looks urgent',
        '  line 5: “A very long subject that goes on and on past sixty character” failed — TROUPE_MODEL_FAILED: timeout',
        '',
      ].join('\n'),
    );
  });

  it('without failures or mistakes, says neither', () => {
    const text = formatEvalReport(scoreEval(results.slice(0, 1)), 'offline');
    expect(text).toContain('Accuracy: 100.0% (1 of 1)\n');
    expect(text).not.toContain('Mistakes');
    expect(formatEvalReport(scoreEval([{ item: news }]), 'offline')).toContain(
      '  line 1: “Newsletter” failed — no decision',
    );
  });
});
