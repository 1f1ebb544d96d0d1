/**
 * Triage rules: which rule decides an email, and the reason the decision gives for it. A rule is
 * the user's own word on a sender or a subject, so what it matches (and what it does not) and the
 * sentence shown for it are what a person reads in the inbox.
 */
import { describe, expect, it } from 'vitest';
import { type Email, parseEmail } from '../../src/email/emailInput.js';
import type { TriageRule } from '../../src/email/triagePreferences.js';
import { triageEmail } from '../../src/email/triageRouter.js';
import { applyTriageRules } from '../../src/email/triageRules.js';

function email(from: string, subject: string, body = 'Hello.'): Email {
  const parsed = parseEmail({ id: 'r1', from, to: 'sam@acme.dev', subject, body });
  if (!parsed.ok) throw parsed.error;
  return parsed.email;
}

describe('a sender or subject rule', () => {
  it('matches part of the sender or the subject in any case, and in any Unicode spelling of the same letters', () => {
    const rules: TriageRule[] = [{ from: 'Billing@Shop', classification: 'ignore' }];
    expect(applyTriageRules(email('BILLING@SHOP.example', 'Your receipt'), rules)?.classification).toBe(
      'ignore',
    );
    // Fullwidth letters read as the letters they stand for.
    expect(
      applyTriageRules(email('ｂｉｌｌｉｎｇ@shop.example', 'Your receipt'), rules)?.classification,
    ).toBe('ignore');
    const bySubject: TriageRule[] = [{ subject: 'INCIDENT', classification: 'respond' }];
    expect(
      applyTriageRules(email('ops@acme.dev', 'Sev1 incident in eu-west'), bySubject)?.classification,
    ).toBe('respond');
    expect(applyTriageRules(email('ops@acme.dev', 'Weekly digest'), bySubject)).toBeUndefined();
    expect(
      applyTriageRules(email('ana@acme.dev', 'Incidental'), [{ from: 'billing', classification: 'ignore' }]),
    ).toBe(undefined);
  });

  it('with both a sender and a subject, decides only an email that matches both', () => {
    const rules: TriageRule[] = [{ from: 'ci@acme.dev', subject: 'failed', classification: 'notify' }];
    expect(applyTriageRules(email('ci@acme.dev', 'Build failed'), rules)?.classification).toBe('notify');
    expect(applyTriageRules(email('ci@acme.dev', 'Build passed'), rules)).toBeUndefined();
    expect(applyTriageRules(email('ana@acme.dev', 'Build failed'), rules)).toBeUndefined();
  });

  it('the first rule that matches decides, whatever the rules after it say', () => {
    const rules: TriageRule[] = [
      { from: 'boss@acme.dev', classification: 'respond' },
      { from: '@acme.dev', classification: 'ignore' },
    ];
    expect(applyTriageRules(email('boss@acme.dev', 'Hi'), rules)?.classification).toBe('respond');
    expect(applyTriageRules(email('intern@acme.dev', 'Hi'), rules)?.classification).toBe('ignore');
  });

  it('says which parts matched, why the user made the rule, and that no model was asked', () => {
    const both: TriageRule[] = [
      {
        from: 'ci@acme.dev',
        subject: 'failed',
        classification: 'notify',
        reason: 'the build must stay green',
      },
    ];
    expect(applyTriageRules(email('ci@acme.dev', 'Build failed'), both)).toEqual({
      classification: 'notify',
      reasoning:
        'Rule: the sender contains “ci@acme.dev” and the subject contains “failed” (the build must stay green), so notify; no model was asked.',
      decidedBy: 'rule',
    });
    expect(
      applyTriageRules(email('news@newsletter.example', 'Deals'), [
        { from: 'newsletter', classification: 'ignore', reason: 'a newsletter sender' },
      ]),
    ).toEqual({
      classification: 'ignore',
      reasoning:
        'Rule: the sender contains “newsletter” (a newsletter sender), so ignore; no model was asked.',
      decidedBy: 'rule',
    });
    // Without a reason there are no parentheses; with one part, no "and".
    expect(
      applyTriageRules(email('ops@acme.dev', 'Sev1 incident'), [
        { subject: 'incident', classification: 'respond' },
      ]),
    ).toEqual({
      classification: 'respond',
      reasoning: 'Rule: the subject contains “incident”, so respond; no model was asked.',
      decidedBy: 'rule',
    });
  });
});

describe('the triage router with rules', () => {
  it('a rule decides before the offline router, and the decision names the profile version it read', async () => {
    const preferences = {
      instructions: 'Respond:\n- project status updates',
      rules: [{ from: 'status@acme.dev', classification: 'ignore' as const }],
    };
    const status = email('status@acme.dev', 'Project status update');
    expect(await triageEmail(status, preferences, { profileVersion: 7 })).toMatchObject({
      classification: 'ignore',
      decidedBy: 'rule',
      profileVersion: 7,
    });
    // Without the rule the same email goes to the offline router (it matches the Respond line).
    const offline = await triageEmail(status, { ...preferences, rules: [] }, { profileVersion: 7 });
    expect(offline).toMatchObject({ classification: 'respond', decidedBy: 'offline', profileVersion: 7 });
    // No version given: the decision holds none.
    expect(await triageEmail(status, preferences)).not.toHaveProperty('profileVersion');
    expect(await triageEmail(status, { ...preferences, rules: [] })).not.toHaveProperty('profileVersion');
  });
});
