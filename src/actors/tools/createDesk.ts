import type { ComposedReply } from '../../composer/composedReply.js';
import type { ComposerConfigOptions } from '../../composer/composerConfig.js';
import { type CreateStep, composeCreateStep, mayCreate } from '../../composer/createSteps.js';
import type { CreateTelemetry } from '../../composer/telemetry.js';
import { createMachineStepper } from '../../engine/machineStepper.js';
import type { TurnClaim } from '../../floor/floorTypes.js';
import type { Logger } from '../../logging/logger.js';
import { type CreateRecordEvent, createRecordMachine } from '../../machines/createRecord.machine.js';
import type { RecordCreator, RecordForm } from '../../ports/recordCreator.js';
import type { EventLog } from '../../ports/store.js';
import { createIntent, readCreateReply } from '../../textRules/createReply.js';

/** What the create desk needs. */
export interface CreateDeskOptions {
  /** Reads forms and inserts; without one, every create request is refused. */
  creator: RecordCreator | undefined;
  compose: (envelope: unknown, options?: ComposerConfigOptions) => ComposedReply;
  /** Where the `AGENT_CAN_CREATE_*` capabilities come from, read at every step. */
  composer: ComposerConfigOptions | undefined;
  events: EventLog;
  /** The stream telemetry goes to. */
  stream: string;
  logger: Logger;
  /** How long a flow waits for the next reply (default 10 minutes). */
  ttlMs?: number;
}

const stepper = createMachineStepper(createRecordMachine);
type FlowState = ReturnType<typeof stepper.initial>;
interface Flow {
  state: FlowState;
  form: RecordForm;
  name: string | undefined;
}

/**
 * Runs "create vendor Acme Widgets" flows, one per channel and person: asks for the fields the
 * table requires, shows the row, and on yes inserts it through the lookup tool's creator and
 * composes the outcome. The lifecycle is {@link createRecordMachine}; the desk does the I/O.
 */
export class CreateDesk {
  private readonly flows = new Map<string, Flow>();

  constructor(private readonly options: CreateDeskOptions) {}

  /** Flows waiting for a reply right now (for inspection and tests). */
  get openCount(): number {
    return this.flows.size;
  }

  /** The reply to `text` when it starts or continues a create flow; undefined otherwise. */
  async answer(input: { key: string; turn: TurnClaim; text: string }): Promise<{ text: string } | undefined> {
    const { key, turn, text } = input;
    const flow = this.flows.get(key);
    if (flow) {
      if (turn.claimedAt < flow.state.context.expiresAt) return this.continueFlow(key, flow, turn, text);
      this.flows.delete(key);
    }
    const intent = createIntent(text);
    if (!intent) return undefined;
    const { creator, composer } = this.options;
    if (!creator || !mayCreate(intent.entityType, composer)) {
      await this.record(turn, { entity_type: intent.entityType, response_mode: 'error', outcome: 'refused' });
      return composeCreateStep({ kind: 'refused', entityType: intent.entityType });
    }
    const result = await creator.formFor(intent.entityType);
    if (!result.ok)
      return this.finish(turn, intent.entityType, this.options.compose(result.envelope, composer));
    const { form } = result;
    const values = form.nameColumn === undefined ? {} : { [form.nameColumn]: intent.name };
    const state = stepper.initial({
      entityType: form.entityType,
      values,
      required: form.required,
      at: turn.claimedAt,
      ttlMs: this.options.ttlMs ?? 10 * 60_000,
    });
    const started: Flow = { state, form, name: intent.name };
    this.flows.set(key, started);
    return composeCreateStep(this.stepOf(started));
  }

  private async continueFlow(
    key: string,
    flow: Flow,
    turn: TurnClaim,
    text: string,
  ): Promise<{ text: string }> {
    const at = turn.claimedAt;
    const reply = readCreateReply(text, flow.form.columns);
    const asking = flow.state.value === 'asking';
    const event: CreateRecordEvent =
      reply.kind === 'no'
        ? { type: 'create.cancel', at }
        : reply.kind === 'correction'
          ? { type: 'create.correct', at, column: reply.column, value: reply.value }
          : reply.kind === 'yes' && !asking
            ? { type: 'create.confirm', at }
            : asking
              ? { type: 'create.answer', at, text: reply.kind === 'other' ? reply.text : text.trim() }
              : { type: 'create.tick', at };
    flow.state = stepper.step(flow.state, event);
    const entityType = flow.form.entityType;
    if (flow.state.value === 'cancelled') {
      this.flows.delete(key);
      await this.record(turn, { entity_type: entityType, response_mode: 'cancelled', outcome: 'cancelled' });
      return composeCreateStep({ kind: 'cancelled', entityType });
    }
    if (flow.state.value !== 'inserting') return composeCreateStep(this.stepOf(flow));
    this.flows.delete(key);
    const { creator, composer, compose } = this.options;
    // The capability is read again: it may have been turned off while the person was answering.
    if (!creator || !mayCreate(entityType, composer)) {
      await this.record(turn, { entity_type: entityType, response_mode: 'error', outcome: 'refused' });
      return composeCreateStep({ kind: 'refused', entityType });
    }
    const envelope = await creator.create(entityType, flow.state.context.values);
    return this.finish(turn, entityType, compose(envelope, composer));
  }

  private stepOf(flow: Flow): CreateStep {
    const { context } = flow.state;
    const column = context.missing[0];
    return flow.state.value === 'asking' && column !== undefined
      ? { kind: 'ask', entityType: context.entityType, name: flow.name, column }
      : { kind: 'confirm', entityType: context.entityType, values: context.values };
  }

  private async finish(turn: TurnClaim, entityType: string, reply: ComposedReply): Promise<ComposedReply> {
    const created = reply.telemetry.response_mode === 'success';
    await this.record(turn, {
      entity_type: entityType,
      response_mode: created ? 'success' : 'error',
      outcome: created ? 'created' : 'failed',
      ...(reply.parts.errorCategory ? { error_category: reply.parts.errorCategory } : {}),
    });
    for (const counter of reply.counters)
      await this.options.events
        .increment(counter)
        .catch((error: unknown) => this.options.logger.warn({ err: error }, 'counter not written'));
    return reply;
  }

  private async record(turn: TurnClaim, entry: Omit<CreateTelemetry, 'action'>): Promise<void> {
    const { events, stream, logger } = this.options;
    await events
      .append(stream, { action: 'create', ...entry }, turn.claimedAt)
      .catch((error: unknown) => logger.warn({ err: error }, 'telemetry not written'));
  }
}
