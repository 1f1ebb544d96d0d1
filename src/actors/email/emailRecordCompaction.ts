import { memoryUpdateFor } from '../../email/agentInbox.js';
import type { Email } from '../../email/emailInput.js';
import type { TriageDecision } from '../../email/triageDecision.js';
import type { EmailLifecycleContext } from '../../machines/emailLifecycle.machine.js';
import { type AnsweredInterrupt, type EmailRecord, FINISHED, KEPT_BODY } from './emailRecord.js';

/**
 * A finished email's record as kept: the body cut to its first {@link KEPT_BODY} characters, the
 * agent's steps without their results (read only while drafting), and the triage reasoning once
 * (in `decision`, not again in the lifecycle's context).
 */
export function compacted(record: EmailRecord): EmailRecord {
  const { context } = record.state;
  // A failed email may be retried (EmailAssistant.retry): it keeps its whole body and the steps'
  // results, from which the agent's history is written again.
  const failed = record.state.value === 'failed';
  const { agentSteps: _steps, unreviewed: _unreviewed, ...kept } = record;
  const out: EmailRecord = {
    ...kept,
    email: failed ? record.email : { ...record.email, body: record.email.body.slice(0, KEPT_BODY) },
    state: {
      value: record.state.value,
      context: record.decision ? { ...context, reasoning: null } : context,
    },
    steps: failed ? record.steps : record.steps.map((s) => ({ call: s.call })),
    compacted: true,
  };
  if (record.answered)
    out.answered = record.answered.map((full) => {
      // Where an answer stands in the agent's history is read only while drafting.
      const { step: _at, ...unplaced } = full;
      const entry = failed || full.answer.type === 'accept' ? full : (unplaced as AnsweredInterrupt);
      // An accepted call's arguments are those of the step that carried it out: kept there once.
      const step = entry.step === undefined ? undefined : record.steps[entry.step];
      if (entry.answer.type !== 'accept' || !entry.args || !step || step.call.tool !== entry.action)
        return entry;
      if (JSON.stringify(step.call.args) !== JSON.stringify(entry.args)) return entry;
      const { args: _same, ...rest } = entry;
      return rest;
    });
  return out;
}

/**
 * What a finished email's lifecycle context holds unless it says otherwise; the stored record
 * leaves these out ({@link storedContext}) and reading it puts them back ({@link readRecord}).
 */
const RESTING_CONTEXT: Omit<EmailLifecycleContext, 'emailId' | 'now'> = {
  classification: null,
  reasoning: null,
  pending: null,
  feedback: [],
  triageAttempts: 0,
  maxTriageAttempts: 3,
  agentAttempts: 0,
  maxAgentAttempts: 3,
  toolCalls: 0,
  outcome: null,
  error: null,
};

/** A finished email as stored: without the lists that are empty and the Gmail source (the usual). */
function storedEmail(email: Email): Partial<Email> {
  const { references, labels, source, ...rest } = email;
  return {
    ...rest,
    ...(references.length > 0 ? { references } : {}),
    ...(labels.length > 0 ? { labels } : {}),
    ...(source !== 'gmail' ? { source } : {}),
  };
}

/** A finished email's context as stored: `now` and the fields that differ from the resting ones. */
function storedContext(context: EmailLifecycleContext, emailId: string): Partial<EmailLifecycleContext> {
  const kept: Record<string, unknown> = { now: context.now };
  if (context.emailId !== emailId) kept.emailId = context.emailId;
  for (const name of RESTING_FIELDS) {
    const value = context[name];
    const resting = RESTING_CONTEXT[name];
    // The resting values are null, numbers and one empty list.
    const same = Array.isArray(value) ? value.length === 0 : value === resting;
    if (!same) kept[name] = value;
  }
  return kept as Partial<EmailLifecycleContext>;
}

const RESTING_FIELDS = Object.keys(RESTING_CONTEXT) as (keyof typeof RESTING_CONTEXT)[];

/** A stored record as read: a compacted one gets its context's left-out fields back. */
export function readRecord(value: EmailRecord, version: number): EmailRecord {
  if (!FINISHED.has(String(value.state.value))) return { ...value, stored: version };
  // A finished record is stored compacted (see storedRecord()): what it leaves out comes back.
  const stored: Partial<EmailLifecycleContext> = value.state.context;
  const context = { ...RESTING_CONTEXT, emailId: value.email.id, ...stored } as EmailLifecycleContext;
  const kept: Partial<Email> = value.email;
  const email = { references: [], labels: [], source: 'gmail', ...kept } as Email;
  const record: EmailRecord = {
    ...value,
    email,
    state: { value: value.state.value, context },
    steps: value.steps ?? [],
    compacted: true,
    stored: version,
  };
  if (value.decision)
    record.decision = {
      classification: context.classification ?? 'notify',
      ...(value.decision as Partial<TriageDecision>),
    } as TriageDecision;
  if (value.answered)
    record.answered = value.answered.map((entry) => {
      if (!entry.memory || entry.memory.namespace) return entry;
      const namespace = memoryUpdateFor(entry.action, entry.answer)?.namespace ?? '';
      return { ...entry, memory: { ...entry.memory, namespace } };
    });
  return record;
}

/** A record as written: its version and the interrupt it raises are left out or left undefined. */
type WrittenEmailRecord = Partial<Omit<EmailRecord, 'stored' | 'raising'>> & {
  stored?: undefined;
  raising?: undefined;
};

/** A record as written: without its version and the interrupt it raises; a finished one compacted. */
export function storedRecord(record: EmailRecord): WrittenEmailRecord {
  // Left undefined, not left out: JSON leaves them out, and a copy without them costs more.
  if (!record.compacted) return { ...record, stored: undefined, raising: undefined };
  const { stored: _version, raising: _raising, ...written } = record;
  // Compacted, a finished record also leaves out what reading it puts back (readRecord()): the
  // flag itself (finished is compacted), no steps, the classification again in `decision`, and
  // the memory namespace the answer's table names.
  const { compacted: _flag, steps, decision, answered, ...rest } = written;
  const out: WrittenEmailRecord = {
    ...rest,
    email: storedEmail(written.email) as Email,
    state: {
      value: written.state.value,
      context: storedContext(written.state.context, written.email.id) as EmailLifecycleContext,
    },
  };
  if (steps.length > 0) out.steps = steps;
  if (decision) {
    const { classification, ...why } = decision;
    out.decision = (
      classification === written.state.context.classification ? why : decision
    ) as TriageDecision;
  }
  if (answered)
    out.answered = answered.map((entry) => {
      if (!entry.memory || entry.memory.namespace !== memoryUpdateFor(entry.action, entry.answer)?.namespace)
        return entry;
      const { namespace: _named, ...memory } = entry.memory as NonNullable<AnsweredInterrupt['memory']>;
      return { ...entry, memory: memory as NonNullable<AnsweredInterrupt['memory']> };
    });
  return out;
}
