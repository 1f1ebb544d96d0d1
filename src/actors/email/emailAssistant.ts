import { type Observable, Subject } from 'rxjs';
import { zodIssues } from '../../config/zodIssues.js';
import {
  disallowed,
  editedArgs,
  type HumanResponse,
  humanResponseSchema,
  type InterruptRequest,
  memoryUpdateFor,
  NOTIFY_ACTION,
  notifyInterrupt,
  type ReviewedTool,
  toolInterrupt,
} from '../../email/agentInbox.js';
import { parseEmail } from '../../email/emailInput.js';
import { defaultUserBackground } from '../../email/emailSettings.js';
import {
  defaultCalendarPreferences,
  defaultResponsePreferences,
  type MemoryInteraction,
  updateMemory,
} from '../../email/memoryUpdate.js';
import { nextToolCall } from '../../email/responseAgent.js';
import { isReviewed, type ResponseToolCall, responseToolSchemas } from '../../email/responseTools.js';
import { memoryNamespaces, PREFERENCES_KEY } from '../../email/triagePreferences.js';
import { readTriageProfile, triageEmail } from '../../email/triageRouter.js';
import { compileMachine } from '../../engine/compiledMachine.js';
import { type Logger, silentLogger } from '../../logging/logger.js';
import { type EmailLifecycleEvent, emailLifecycleMachine } from '../../machines/emailLifecycle.machine.js';
import type { AgentModel } from '../../ports/agentModel.js';
import type { Clock } from '../../ports/clock.js';
import type { Calendar, Mailbox } from '../../ports/mailbox.js';
import type { ObjectModel } from '../../ports/objectModel.js';
import type { TroupeStore } from '../../ports/store.js';
import { describe, TroupeError } from '../../ports/troupeError.js';
import { meteredAgentModel, meteredObjectModel } from '../usage/meteredEmailModels.js';
import type { UsageLedger } from '../usage/usageLedger.js';
import { agentHistory } from './emailAgentHistory.js';
import {
  answerTo,
  failedEmails,
  inboxItem,
  inboxItemOf,
  pendingItems,
  waitingOn,
} from './emailInboxItems.js';
import { answeredBefore, entryOf } from './emailPreviousFormat.js';
import {
  type AnsweredInterrupt,
  DEFAULT_MAX_STEPS,
  DEFAULT_MAX_UNREVIEWED_CALLS,
  EMAILS,
  type EmailRecord,
  type FailedEmail,
  FINISHED,
  INBOX,
  type InboxItem,
  isIn,
  stateName,
} from './emailRecord.js';
import { compacted, readRecord, storedRecord } from './emailRecordCompaction.js';
import { carryOut } from './emailToolExecution.js';

/**
 * An answer younger than this is left to the process that took it; resume() carries through
 * only older ones (that process stopped before it was done).
 */
const CARRY_THROUGH_AFTER_MS = 60_000;
// The compiled engine steps the lifecycle as xstate does (the model-based test checks it) at a
// fraction of the cost; records are plain data either way.
const engine = compileMachine(emailLifecycleMachine);

/** A write of the email's record failed: not the email's fault, so it is not failed for it. */
class WriteFailed extends Error {
  constructor(override readonly cause: unknown) {
    super('the record could not be written');
  }
}

/**
 * What changed in the assistant's store, told after the write (see {@link EmailAssistant.changes$}):
 * an email's record, an interrupt raised or answered (with the memory version its answer made),
 * or an interrupt taken back.
 */
export type EmailAssistantChange =
  | { type: 'record'; record: EmailRecord }
  | { type: 'interrupt'; item: InboxItem }
  | { type: 'interrupt.removed'; interruptId: string };

/** How an {@link EmailAssistant} is made. */
export interface EmailAssistantOptions {
  store: TroupeStore;
  mailbox: Mailbox;
  calendar: Calendar;
  clock: Clock;
  /** Triage and memory updates ask it; without one, the offline router and memory updates work. */
  model?: ObjectModel;
  /** The response agent's model (tool calling); without one, the offline agent drafts. */
  agentModel?: AgentModel;
  userName: string;
  /** Who the user is and their role, for triage and the agent (default: a sentence naming the user). */
  background?: string;
  /** Model steps the agent may take per email before the email fails (default 12). */
  maxSteps?: number;
  /** Calls of tools that need no review (the calendar check) per email before it fails (default 3). */
  maxUnreviewedCalls?: number;
  timeZone: string;
  logger?: Logger;
  /**
   * Where the models' calls are counted (purposes `triage`, `agent-step`, `memory-update`, scope
   * `mail:<mailbox id>`). Without one they are not counted.
   */
  usage?: UsageLedger;
}

/**
 * The email assistant on Troupe's store: each email goes through the lifecycle
 * statechart; every step's result is an event, and the email's record (state, agent steps,
 * pending interrupt) is written after each one, so a restart ({@link resume}) continues where
 * each email was. Nothing is sent twice: a received email id is processed once, answers are
 * stored before anything acts on them, and replies and invitations carry an idempotency key per
 * call, so a resend after a crash returns the first.
 */
export class EmailAssistant {
  private readonly log: Logger;
  private readonly changes = new Subject<EmailAssistantChange>();
  /** The models as the steps call them: metered when a usage ledger is given. */
  private readonly triageModel: ObjectModel | undefined;
  private readonly memoryModel: ObjectModel | undefined;
  private readonly agentModel: AgentModel | undefined;

  /**
   * Every stored change this assistant made, right after it was written: for live views (the
   * studio) that follow the inbox without polling. Changes made by other processes sharing the
   * store are not seen here.
   */
  readonly changes$: Observable<EmailAssistantChange> = this.changes.asObservable();

  constructor(private readonly options: EmailAssistantOptions) {
    this.log = options.logger ?? silentLogger();
    const { model, agentModel, usage } = options;
    const meter = usage && { ledger: usage, clock: options.clock, scope: `mail:${options.mailbox.id}` };
    this.triageModel = model && meter ? meteredObjectModel(model, meter, 'triage') : model;
    this.memoryModel = model && meter ? meteredObjectModel(model, meter, 'memory-update') : model;
    this.agentModel = agentModel && meter ? meteredAgentModel(agentModel, meter) : agentModel;
  }

  /** Tells observers of {@link changes$}, only when someone listens (copies cost nothing then). */
  private changed(change: EmailAssistantChange): void {
    if (this.changes.observed) this.changes.next(change);
  }

  /**
   * Takes an email (any input shape) and runs it as far as it goes without the human. Returns its
   * record, or the `TROUPE_EMAIL_INVALID` error for input that is not an email. An email id seen
   * before is not processed again (its stored record is returned).
   */
  async receive(input: unknown): Promise<EmailRecord | TroupeError> {
    const parsed = parseEmail(input);
    if (!parsed.ok) return parsed.error;
    const email = parsed.email;
    // An email is claimed by creating its record (see save()); one seen before is not processed again.
    const existing = await this.record(email.id);
    if (existing) return existing;
    const initial = engine.initial({ emailId: email.id, at: this.now() });
    let record: EmailRecord = {
      email,
      state: { value: initial.value, context: initial.context },
      steps: [],
      stored: 0,
    };
    record = this.step(record, { type: 'email.parsed', at: this.now() });
    return this.advance(record);
  }

  /**
   * Every email not done, continued as far as it goes (after a restart). An answer that was stored
   * but not yet carried through (the process stopped in between) is carried through now.
   */
  async resume(): Promise<EmailRecord[]> {
    const { documents } = this.options.store;
    const records = await documents.list<EmailRecord>(EMAILS);
    const out: EmailRecord[] = [];
    for (const doc of records) {
      const record = readRecord(doc.value, doc.version);
      if (FINISHED.has(String(record.state.value))) continue;
      // A step's failure fails its email only (advance()); the others go on.
      out.push(await this.resumeOne(record));
    }
    return out;
  }

  /** One email not done, continued (see {@link resume}). */
  private async resumeOne(record: EmailRecord): Promise<EmailRecord> {
    const { documents } = this.options.store;
    if (record.interruptId) {
      let waiting = record;
      let entry = answerTo(record, record.interruptId);
      if (!entry) {
        // Answered under the build before (kept apart then), and not carried through.
        const before = await answeredBefore(this.options.store.documents, record, record.interruptId);
        if (before) {
          entry = entryOf(before, record);
          waiting = { ...record, answered: [...(record.answered ?? []), entry] };
        }
      }
      if (entry && entry.answeredAt + CARRY_THROUGH_AFTER_MS <= this.now()) {
        // An earlier build wrote an answer and the pending copy's removal apart: a copy left
        // by a stop in between goes now.
        if (waiting !== record && (await documents.delete(INBOX, record.interruptId)))
          this.changed({ type: 'interrupt.removed', interruptId: record.interruptId });
        return this.proceed(entry, waiting, true);
      }
      return record;
    }
    return this.advance(record);
  }

  /**
   * Runs a failed email again: its lifecycle starts over from triage (a new triage, fresh tries
   * and bounds), keeping what was done — the calls carried out and the answers given — so the
   * agent's history holds them, and interrupt numbers go on from the last one. Replies and
   * bookings keep their keys per step, so one already made is not made again.
   *
   * @throws TroupeError `TROUPE_INBOX_INVALID` when there is no such email or it has not failed.
   */
  async retry(emailId: string): Promise<EmailRecord> {
    const record = await this.record(emailId);
    if (!record)
      throw new TroupeError(
        'TROUPE_INBOX_INVALID',
        `No email ${emailId}; \`troupe inbox list\` shows failed emails.`,
      );
    if (record.state.value !== 'failed')
      throw new TroupeError(
        'TROUPE_INBOX_INVALID',
        `Email ${emailId} has not failed (it is ${stateName(record.state.value)}); only a failed email is retried.`,
      );
    const {
      compacted: _compacted,
      proposed: _proposed,
      interruptId: _interrupt,
      askedAt: _asked,
      agentSteps: _steps,
      unreviewed: _unreviewed,
      decision: _decision,
      ...kept
    } = record;
    const initial = engine.initial({ emailId: record.state.context.emailId, at: this.now() });
    this.log.info({ emailId }, 'retrying a failed email');
    const fresh = this.step(
      { ...kept, state: { value: initial.value, context: initial.context } },
      { type: 'email.parsed', at: this.now() },
    );
    return this.advance(fresh);
  }

  /** The emails that failed, with why (the error's code and message), most recent first. */
  async failed(): Promise<FailedEmail[]> {
    return failedEmails(this.options.store.documents);
  }

  /** The interrupts waiting for the human, oldest first. */
  async pending(): Promise<InboxItem[]> {
    return pendingItems(this.options.store.documents);
  }

  /** The interrupt waiting for the human on one email, if any. */
  async pendingFor(emailId: string): Promise<InboxItem[]> {
    const record = await this.record(emailId);
    if (!record?.interruptId) return [];
    const item = await this.options.store.documents.get<InboxItem>(INBOX, record.interruptId);
    return item ? [item.value] : [];
  }

  /**
   * One interrupt of the inbox, pending or answered (with how it was answered, and its request as
   * it was shown, without the email's body).
   */
  async interrupt(interruptId: string): Promise<InboxItem | undefined> {
    return inboxItem(this.options.store.documents, interruptId);
  }

  /** An email's record. */
  async record(emailId: string): Promise<EmailRecord | undefined> {
    const stored = await this.options.store.documents.get<EmailRecord>(EMAILS, emailId);
    return stored ? readRecord(stored.value, stored.version) : undefined;
  }

  /**
   * The human's answer to an interrupt (Agent Inbox shape). Validated (the shape, what the request
   * allows, edited arguments against the tool's schema) and stored before anything acts on it;
   * then the memory the answer calls for is updated and the email continues.
   *
   * @throws TroupeError `TROUPE_INBOX_INVALID` for an unknown or answered interrupt or an answer it
   *   does not allow; nothing is changed then.
   */
  async answer(interruptId: string, raw: unknown): Promise<{ item: InboxItem; record: EmailRecord }> {
    const { documents } = this.options.store;
    // The email's record says what it waits on (its interrupt is in the inbox while it does).
    const hash = interruptId.lastIndexOf('#');
    const record = hash > 0 ? await this.record(interruptId.slice(0, hash)) : undefined;
    const earlier =
      (record && answerTo(record, interruptId)) ??
      (hash > 0 ? await answeredBefore(this.options.store.documents, record, interruptId) : undefined);
    if (!record || record.interruptId !== interruptId || earlier)
      throw new TroupeError(
        'TROUPE_INBOX_INVALID',
        earlier
          ? `Interrupt ${interruptId} was already answered (${earlier.answer?.type}).`
          : `No interrupt ${interruptId} in the inbox.`,
      );
    const parsed = humanResponseSchema.safeParse(raw);
    if (!parsed.success)
      throw new TroupeError('TROUPE_INBOX_INVALID', `Not an Agent Inbox answer: ${zodIssues(parsed.error)}.`);
    // An accept or ignore carries nothing the assistant reads (Agent Inbox sends the call back
    // with an accept): kept without it, so a client cannot park what it likes in the record.
    let answer: HumanResponse =
      parsed.data.type === 'accept' || parsed.data.type === 'ignore'
        ? { type: parsed.data.type }
        : parsed.data;
    const request = await waitingOn(documents, record, interruptId);
    const refusal = disallowed(request, answer);
    if (refusal) throw new TroupeError('TROUPE_INBOX_INVALID', `${refusal}.`);
    if (answer.type === 'edit' && record.proposed) {
      const edited = editedArgs(
        answer,
        responseToolSchemas[record.proposed.tool],
        record.proposed.args as Record<string, unknown>,
      );
      if (!edited.ok)
        throw new TroupeError(
          'TROUPE_INBOX_INVALID',
          `The edit does not fit ${record.proposed.tool}: ${edited.problem}.`,
        );
      // Kept as the fields it changes, validated: as sent (a JSON string, a wrapper) it could
      // carry anything beside them into the record.
      const proposed = record.proposed.args as Record<string, unknown>;
      const changed = Object.entries(edited.args as Record<string, unknown>).filter(
        ([field, value]) => JSON.stringify(value) !== JSON.stringify(proposed[field]),
      );
      answer = { type: 'edit', args: Object.fromEntries(changed) };
    }
    // Stored before anything acts on it, in the email's record: a crash after this write carries
    // the answer through on resume().
    const { action, args } = request.action_request;
    const entry: AnsweredInterrupt = {
      n: Number(interruptId.slice(hash + 1)),
      action,
      ...(action === NOTIFY_ACTION ? {} : { args }),
      ...(answer.type !== 'ignore' ? { step: record.steps.length } : {}),
      answer,
      createdAt: record.askedAt ?? record.state.context.now,
      answeredAt: this.now(),
    };
    const withAnswer: EmailRecord = {
      ...record,
      askedAt: undefined,
      answered: [...(record.answered ?? []), entry],
    };
    let written: EmailRecord;
    try {
      // Of two answers at the same time, one is written and the other refused (the record's
      // version); the interrupt leaves what waits in the same write.
      const [, version] = await documents.batch([
        { op: 'delete', collection: INBOX, key: interruptId },
        {
          op: 'put',
          collection: EMAILS,
          key: record.email.id,
          value: storedRecord(withAnswer),
          expectedVersion: record.stored,
        },
      ]);
      written = { ...withAnswer, stored: version as number };
    } catch (error) {
      if (!TroupeError.isInstance(error) || error.code !== 'TROUPE_STORE_CONFLICT') throw error;
      throw new TroupeError(
        'TROUPE_INBOX_INVALID',
        `Interrupt ${interruptId} was answered at the same time elsewhere; that answer stands.`,
      );
    }
    if (this.changes.observed) {
      this.changed({ type: 'interrupt', item: inboxItemOf(written, entry) });
      this.changed({ type: 'record', record: written });
    }
    const next = await this.proceed(entry, written, false);
    const after = answerTo(next, interruptId);
    return { item: after ? inboxItemOf(next, after) : inboxItemOf(written, entry), record: next };
  }

  /**
   * Carries a stored answer through: the memory update it calls for (once: on a replay, a version
   * already learned from this interrupt is not learned again), then the email goes on.
   */
  private async proceed(entry: AnsweredInterrupt, start: EmailRecord, replay: boolean): Promise<EmailRecord> {
    const { answer } = entry;
    const interruptId = `${start.email.id}#${entry.n}`;
    let record = start;
    let editedCall: ResponseToolCall | undefined;
    if (answer.type === 'edit' && record.proposed) {
      const edited = editedArgs(
        answer,
        responseToolSchemas[record.proposed.tool],
        record.proposed.args as Record<string, unknown>,
      );
      if (edited.ok) editedCall = { tool: record.proposed.tool, args: edited.args } as ResponseToolCall;
    }
    const update = memoryUpdateFor(entry.action, answer);
    const origin = `inbox ${interruptId}`;
    let learnedNow: AnsweredInterrupt | undefined;
    // What the answer taught goes into its entry, written with the email's next record.
    const remember = (memory: NonNullable<AnsweredInterrupt['memory']>) => {
      learnedNow = { ...entry, memory };
      record = {
        ...record,
        answered: (record.answered ?? []).map((e) =>
          e.n === entry.n ? (learnedNow as AnsweredInterrupt) : e,
        ),
      };
    };
    let learned = entry.memory !== undefined;
    if (update && !learned && replay) {
      // A stop between the memory's write and the record's: the version's source says it was
      // learned from this interrupt, so it is not learned again, and the entry names that version
      // (its summary was not kept: the reason it was written stands in for it).
      const latest = await this.options.store.memory.get(update.namespace, PREFERENCES_KEY);
      const suffix = ` (${origin})`;
      if (latest?.source?.endsWith(suffix)) {
        learned = true;
        const reason = latest.source.slice(0, -suffix.length).replace(/^[a-z]+: /u, '');
        remember({ namespace: update.namespace, version: latest.version, summary: `Learned: ${reason}.` });
      }
    }
    if (update && !learned) {
      const interaction: MemoryInteraction = { email: record.email };
      if (answer.type === 'response') interaction.feedback = answer.args;
      if (editedCall && record.proposed)
        interaction.edit = {
          proposed: record.proposed.args as Record<string, unknown>,
          edited: editedCall.args as Record<string, unknown>,
        };
      try {
        const result = await updateMemory({
          memory: this.options.store.memory,
          request: update,
          interaction,
          ...(this.memoryModel ? { model: this.memoryModel } : {}),
          at: this.now(),
          origin,
          logger: this.log,
        });
        remember({ namespace: result.namespace, version: result.version, summary: result.summary });
      } catch (error) {
        // Learning failed; the email still goes on (the answer is stored and acted on).
        this.log.warn({ err: error, namespace: update.namespace }, 'could not update the preferences');
      }
    }
    if (editedCall) record = { ...record, proposed: editedCall };
    record = this.step(
      { ...record, interruptId: undefined },
      {
        type: 'human.answered',
        at: this.now(),
        answer: answer.type,
        ...(answer.type === 'response' ? { feedback: answer.args } : {}),
      },
    );
    const next = await this.advance(record);
    // What the answer taught, told once it is written (with the record).
    const taught = learnedNow && answerTo(next, interruptId);
    if (taught?.memory) this.changed({ type: 'interrupt', item: inboxItemOf(next, taught) });
    return next;
  }

  /**
   * Runs the email through every step that needs no human, then writes it: where it waits for the
   * human, or done. Steps in between are not written one by one: what follows the last write is
   * worked out again from it after a crash (the human's answers are stored before they act, and
   * a send or booking carries a key made from the written state, so a repeat returns the first).
   */
  private async advance(start: EmailRecord): Promise<EmailRecord> {
    let record = start;
    try {
      return await this.run(start, (reached) => {
        record = reached;
      });
    } catch (error) {
      // A write that failed is not this email's fault (a busy store, a stop): it stops the pass,
      // and what was not written is worked out again on the next one.
      if (error instanceof WriteFailed) throw error.cause;
      return this.save(this.failedFor(record, error));
    }
  }

  /**
   * The email failed for good in a step that threw (a bug, or a bound passed): it ends `failed`
   * with the reason, so the inbox shows it and later emails go on.
   */
  private failedFor(record: EmailRecord, error: unknown): EmailRecord {
    const troupe = TroupeError.isInstance(error) ? error : undefined;
    const reason = { code: troupe?.code ?? 'TROUPE_EMAIL_FAILED', message: describe(error) };
    this.log.warn({ err: error, emailId: record.email.id, code: reason.code }, 'an email failed');
    const value = record.state.value;
    if (isIn(value, 'triaging'))
      return this.step(record, { type: 'triage.failed', at: this.now(), retryable: false, error: reason });
    if (typeof value === 'object' && 'responding' in value)
      return this.step(
        { ...record, interruptId: undefined },
        { type: 'agent.failed', at: this.now(), retryable: false, error: reason },
      );
    // Nothing in the other states throws; should one, the email stays where it was.
    return record;
  }

  /** {@link advance}'s loop; `reached` is told each record on the way (what a failure starts from). */
  private async run(start: EmailRecord, reached: (record: EmailRecord) => void): Promise<EmailRecord> {
    const save = (record: EmailRecord) =>
      this.save(record).catch((error: unknown) => {
        throw new WriteFailed(error);
      });
    let record = start;
    for (let guard = 0; guard < 100; guard += 1) {
      reached(record);
      const value = record.state.value;
      if (isIn(value, 'triaging')) {
        record = await this.triage(record);
        // Still triaging: it failed and is tried again on a later pass, not at once.
        if (isIn(record.state.value, 'triaging')) return save(record);
      } else if (isIn(value, 'notifying')) {
        return save(this.ask(record, notifyInterrupt(record.email)));
      } else if (isIn(value, 'responding', 'drafting')) {
        record = await this.draft(record);
        if (isIn(record.state.value, 'responding', 'drafting')) return save(record);
      } else if (isIn(value, 'responding', 'reviewing')) {
        const call = record.proposed;
        if (!call || !isReviewed(call.tool)) throw new Error('reviewing without a reviewed call');
        return save(
          this.ask(
            record,
            toolInterrupt(record.email, call.tool as ReviewedTool, call.args as Record<string, unknown>),
          ),
        );
      } else if (isIn(value, 'responding', 'executing')) {
        record = await this.execute(record);
        if (isIn(record.state.value, 'responding', 'executing')) return save(record);
      } else if (isIn(value, 'closing')) {
        try {
          // A person saw it if they answered one of its interrupts or a reply went out.
          const seenByPerson =
            (record.answered?.length ?? 0) > 0 || record.steps.some((s) => s.call.tool === 'send_email_tool');
          await this.options.mailbox.close(record.email.id, record.state.context.outcome ?? 'done', {
            seenByPerson,
          });
        } catch (error) {
          // Labelling can wait: the email stays in closing and is closed on a later pass.
          this.log.warn(
            { err: error, emailId: record.email.id },
            'could not close the email; tried again later',
          );
          const troupe = TroupeError.isInstance(error) ? error : undefined;
          return save(
            this.step(record, {
              type: 'email.close-failed',
              at: this.now(),
              error: { code: troupe?.code ?? 'TROUPE_EMAIL_ACTION_FAILED', message: describe(error) },
            }),
          );
        }
        record = this.step(record, { type: 'email.closed', at: this.now() });
      } else {
        return save(record);
      }
    }
    throw new TroupeError(
      'TROUPE_EMAIL_AGENT_LIMIT',
      `Email ${record.email.id} took 100 steps without waiting for anyone or finishing.`,
    );
  }

  private async triage(record: EmailRecord): Promise<EmailRecord> {
    try {
      const { preferences, version } = await readTriageProfile(this.options.store.memory, this.log);
      const decision = await triageEmail(record.email, preferences, {
        profileVersion: version,
        background: this.background(),
        ...(this.triageModel ? { model: this.triageModel } : {}),
      });
      return this.step(
        { ...record, decision },
        {
          type: 'triage.decided',
          at: this.now(),
          classification: decision.classification,
          reasoning: decision.reasoning,
        },
      );
    } catch (error) {
      const retryable = TroupeError.isInstance(error) ? error.retryable : false;
      const code = TroupeError.isInstance(error) ? error.code : 'TROUPE_MODEL_FAILED';
      return this.step(record, {
        type: 'triage.failed',
        at: this.now(),
        retryable,
        error: { code, message: describe(error) },
      });
    }
  }

  private async draft(start: EmailRecord): Promise<EmailRecord> {
    const maxSteps = this.options.maxSteps ?? DEFAULT_MAX_STEPS;
    const taken = start.agentSteps ?? 0;
    if (taken >= maxSteps)
      return this.stepFailed(
        start,
        new TroupeError(
          'TROUPE_EMAIL_AGENT_LIMIT',
          `The agent took ${taken} model steps on this email without finishing (at most ${maxSteps}: TROUPE_EMAIL_MAX_STEPS). Retry it with \`troupe inbox retry ${start.email.id}\`.`,
        ),
        'TROUPE_EMAIL_AGENT_LIMIT',
      );
    const record: EmailRecord = { ...start, agentSteps: taken + 1 };
    try {
      const call = await nextToolCall(
        {
          email: record.email,
          responsePreferences: await this.profile(memoryNamespaces.response, defaultResponsePreferences),
          calendarPreferences: await this.profile(memoryNamespaces.calendar, defaultCalendarPreferences),
          history: agentHistory(record),
          userName: this.options.userName,
          background: this.background(),
          timeZone: this.options.timeZone,
          now: this.now(),
        },
        this.agentModel,
      );
      const maxUnreviewed = this.options.maxUnreviewedCalls ?? DEFAULT_MAX_UNREVIEWED_CALLS;
      if (call.tool !== 'Done' && !isReviewed(call.tool) && (record.unreviewed ?? 0) >= maxUnreviewed)
        throw new TroupeError(
          'TROUPE_EMAIL_AGENT_LIMIT',
          `The agent called ${call.tool} again after ${record.unreviewed} such calls on this email (at most ${maxUnreviewed} calls that need no review: TROUPE_EMAIL_MAX_UNREVIEWED_CALLS). Retry it with \`troupe inbox retry ${record.email.id}\`.`,
        );
      if (call.tool === 'Done')
        return this.step({ ...record, proposed: undefined }, { type: 'agent.done', at: this.now() });
      return this.step(
        { ...record, proposed: call },
        {
          type: 'agent.proposed',
          at: this.now(),
          action: call.tool,
          review: isReviewed(call.tool),
        },
      );
    } catch (error) {
      return this.stepFailed(record, error, 'TROUPE_MODEL_FAILED');
    }
  }

  /**
   * The agent's step failed: a retryable failure leaves the email where it was, to be tried again
   * on a later pass ({@link resume}); after its last try, or when nothing would change, it fails.
   */
  private stepFailed(record: EmailRecord, error: unknown, fallbackCode: string): EmailRecord {
    const troupe = TroupeError.isInstance(error) ? error : undefined;
    this.log.warn({ err: error, emailId: record.email.id }, 'an email’s step failed');
    return this.step(record, {
      type: 'agent.failed',
      at: this.now(),
      retryable: troupe?.retryable ?? true,
      error: { code: troupe?.code ?? fallbackCode, message: describe(error) },
    });
  }

  /** Carries out the proposed call; its key makes a repeat after a crash return the first result. */
  private async execute(record: EmailRecord): Promise<EmailRecord> {
    const call = record.proposed;
    if (!call) throw new Error('executing without a call');
    const key = `${record.email.id}#${record.steps.length}`;
    let result: unknown;
    try {
      result = await carryOut(record, call, key, this.options);
    } catch (error) {
      return this.stepFailed(record, error, 'TROUPE_EMAIL_ACTION_FAILED');
    }
    const steps = [...record.steps, { call, result }];
    const unreviewed = (record.unreviewed ?? 0) + (isReviewed(call.tool) ? 0 : 1);
    return this.step(
      { ...record, steps, proposed: undefined, ...(unreviewed > 0 ? { unreviewed } : {}) },
      { type: 'tool.completed', at: this.now() },
    );
  }

  /**
   * Raises an interrupt and leaves the email waiting for the human; save() writes the two together.
   * The interrupt's id comes from the written record, so working it out again after a crash raises
   * the same one.
   */
  private ask(record: EmailRecord, request: InterruptRequest): EmailRecord {
    if (record.interruptId) return record;
    const asked = (record.asked ?? 0) + 1;
    const id = `${record.email.id}#${asked}`;
    const raising: InboxItem = {
      id,
      emailId: record.email.id,
      request,
      status: 'pending',
      createdAt: this.now(),
    };
    return { ...record, interruptId: id, asked, askedAt: raising.createdAt, raising };
  }

  /**
   * The email waiting on an interrupt raised before (this email worked out again after a stop, or
   * by another process at the same time): the one the human may already be reading stands, with
   * the call it shows.
   */
  private async raisedBefore(waiting: EmailRecord): Promise<EmailRecord> {
    const shown = (await this.options.store.documents.get<InboxItem>(INBOX, waiting.interruptId as string))
      ?.value;
    const call = shown?.request.action_request;
    if (call && waiting.proposed && call.action === waiting.proposed.tool)
      return { ...waiting, proposed: { tool: waiting.proposed.tool, args: call.args } as ResponseToolCall };
    return waiting;
  }

  /** The record after the lifecycle takes `event` (not written yet; {@link advance} writes). */
  private step(record: EmailRecord, event: EmailLifecycleEvent): EmailRecord {
    const next = engine.step(engine.restore(record.state.value, record.state.context), event);
    const state = { value: next.value, context: next.context };
    if (record.proposed !== undefined || !('proposed' in record)) return { ...record, state };
    // Left out rather than deleted (a delete turns the object into a slow dictionary).
    const { proposed: _none, ...rest } = record;
    return { ...rest, state };
  }

  /**
   * Writes the record, only if no other process wrote it since it was read here (the first write
   * of an email creates it), in one atomic write with the interrupt it raises. Otherwise that
   * process's record stands and is returned, and nothing of this write was made (nothing this one
   * did meanwhile left the process unless it was idempotent: a close, a reply or booking under its
   * key). A finished email keeps only the start of its body, so the inbox's footprint stays small.
   */
  private async save(record: EmailRecord): Promise<EmailRecord> {
    const { documents } = this.options.store;
    const finished = FINISHED.has(String(record.state.value));
    const toWrite = finished && !record.compacted ? compacted(record) : record;
    const { raising } = toWrite;
    const key = record.email.id;
    const value = storedRecord(toWrite);
    try {
      let version: number;
      if (!raising) version = await documents.put(EMAILS, key, value, { expectedVersion: record.stored });
      else
        version = (
          await documents.batch([
            { op: 'put', collection: INBOX, key: raising.id, value: raising, expectedVersion: 0 },
            { op: 'put', collection: EMAILS, key, value, expectedVersion: record.stored },
          ])
        ).at(-1) as number;
      const saved: EmailRecord = { ...toWrite, raising: undefined, stored: version };
      if (raising) this.changed({ type: 'interrupt', item: raising });
      this.changed({ type: 'record', record: saved });
      return saved;
    } catch (error) {
      if (!TroupeError.isInstance(error) || error.code !== 'TROUPE_STORE_CONFLICT') throw error;
      const theirs = await this.record(key);
      if (!theirs && record.stored !== 0) throw error;
      if (theirs && theirs.stored !== record.stored) {
        // Another process wrote this email since it was read here: its write stands.
        this.log.info({ emailId: key }, 'another process moved this email on first; its state stands');
        return theirs;
      }
      if (!raising) throw error;
      // The interrupt was raised before (and the record not written with it: a store written by
      // an earlier version, which wrote the two apart).
      const { raising: _raised, ...waiting } = record;
      return this.save(await this.raisedBefore(waiting));
    }
  }

  private async profile(namespace: string, fallback: string): Promise<string> {
    const stored = await this.options.store.memory.get(namespace, PREFERENCES_KEY);
    return typeof stored?.value === 'string' ? stored.value : fallback;
  }

  private background(): string {
    return this.options.background ?? defaultUserBackground(this.options.userName);
  }

  private now(): number {
    return this.options.clock.now();
  }
}
