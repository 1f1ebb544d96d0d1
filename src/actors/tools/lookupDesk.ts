import type { ComposedReply } from '../../composer/composedReply.js';
import type { ComposerConfigOptions } from '../../composer/composerConfig.js';
import { createMachineStepper } from '../../engine/machineStepper.js';
import type { TurnClaim } from '../../floor/floorTypes.js';
import type { Logger } from '../../logging/logger.js';
import { type PendingChoiceContext, pendingChoiceMachine } from '../../machines/pendingChoice.machine.js';
import type { LookupTool } from '../../ports/lookupTool.js';
import type { EventLog } from '../../ports/store.js';
import { CreateDesk } from './createDesk.js';
import { type LookupIntent, lookupIntent } from './lookupIntent.js';

/** What the desk needs. */
export interface LookupDeskOptions {
  tool: LookupTool;
  /** The answer composer. */
  compose: (envelope: unknown, options?: ComposerConfigOptions) => ComposedReply;
  /** Where composer settings come from, read at every composition (default: none, defaults). */
  composer?: ComposerConfigOptions;
  /** The event log telemetry is written to (`agent_event_logs`). */
  events: EventLog;
  logger: Logger;
  /** How long a disambiguation waits for the person's pick (default 10 minutes). */
  choiceTtlMs?: number;
  /** How long a create flow waits for the person's next reply (default 10 minutes). */
  createTtlMs?: number;
}

/** The stream the composer's telemetry goes to. */
export const AGENT_EVENT_LOGS = 'agent_event_logs';

const stepper = createMachineStepper(pendingChoiceMachine);
type PendingState = ReturnType<typeof stepper.initial>;

/**
 * Answers lookup questions for avatars that have the lookup tool: runs the tool, composes its
 * envelope into the reply, writes the composer's telemetry, and keeps one pending choice per
 * channel and person after a disambiguation, so "2", "the second one" or the exact name re-runs
 * the tool by id. Replies go back to the turn pipeline like any model output.
 */
export class LookupDesk {
  private readonly pending = new Map<string, PendingState>();
  /** "create vendor Acme" flows, through the tool's creator (refused when it has none). */
  private readonly creates: CreateDesk;

  constructor(private readonly options: LookupDeskOptions) {
    this.creates = new CreateDesk({
      creator: options.tool.creator,
      compose: options.compose,
      composer: options.composer,
      events: options.events,
      stream: AGENT_EVENT_LOGS,
      logger: options.logger,
      ...(options.createTtlMs !== undefined ? { ttlMs: options.createTtlMs } : {}),
    });
  }

  /**
   * The reply to a turn, if the desk has one: a step of a create flow ("create vendor Acme", with
   * any model), a pick of a pending choice, or (for models that cannot call tools themselves) a
   * plain lookup request it recognises. Undefined otherwise.
   */
  async answer(input: {
    channelKey: string;
    turn: TurnClaim;
    recognise: boolean;
    /** The avatar's name and aliases: "Dewey, the second one" is read as "the second one". */
    names?: readonly string[];
  }): Promise<{ text: string } | undefined> {
    const { turn } = input;
    const text = withoutAddress(turn.context.triggerText, input.names ?? []);
    const userId = turn.context.addressedById;
    if (text === undefined || userId === undefined || turn.kind !== 'response') return undefined;
    const key = `${input.channelKey}\u0000${userId}`;
    const created = await this.creates.answer({ key, turn, text });
    if (created) {
      this.pending.delete(key);
      return created;
    }
    const waiting = this.pending.get(key);
    if (waiting) {
      this.pending.delete(key);
      const next = stepper.step(waiting, { type: 'choice.reply', at: turn.claimedAt, text });
      const picked = (next.context as PendingChoiceContext).picked;
      if (next.value === 'resolved' && picked) {
        return this.run(key, turn, { entity_type: waiting.context.entityType, id: picked.id });
      }
    }
    if (!input.recognise) return undefined;
    const intent = lookupIntent(text);
    return intent ? this.run(key, turn, intent) : undefined;
  }

  /** Runs a lookup the model asked for (tool calling) and composes it. */
  lookupFor(input: { channelKey: string; turn: TurnClaim; query: LookupIntent }): Promise<ComposedReply> {
    const userId = input.turn.context.addressedById ?? 'someone';
    return this.run(`${input.channelKey}\u0000${userId}`, input.turn, input.query);
  }

  /** Pending choices right now (for inspection and tests). */
  get pendingCount(): number {
    return this.pending.size;
  }

  private async run(
    key: string,
    turn: TurnClaim,
    query: {
      entity_type: string;
      entity_name?: string | undefined;
      order_number?: string | undefined;
      id?: string | number;
    },
  ): Promise<ComposedReply> {
    const { tool, compose, events, logger } = this.options;
    let envelope: unknown;
    try {
      envelope = await tool.lookup(query);
    } catch (error) {
      // The tool promises not to throw; if it does, the person still gets a composed error.
      logger.warn({ err: error }, 'lookup tool threw');
      envelope = {
        type: 'error',
        source: 'database',
        query,
        attempts: { exact: false, fuzzy: false, schema_refreshed: false },
        error: { code: 'DATABASE_ERROR', message: 'The lookup failed.' },
      };
    }
    const reply = compose(envelope, this.options.composer);
    const choices = reply.parts.choices ?? [];
    if (choices.length > 0) {
      this.pending.set(
        key,
        stepper.initial({
          channelId: key.split('\u0000')[0] ?? '',
          userId: key.split('\u0000')[1] ?? '',
          entityType: query.entity_type,
          choices: choices.map((c) => ({ id: c.id, label: c.label })),
          at: turn.claimedAt,
          ttlMs: this.options.choiceTtlMs ?? 10 * 60_000,
        }),
      );
    }
    await events
      .append(AGENT_EVENT_LOGS, { ...reply.telemetry }, turn.claimedAt)
      .catch((error: unknown) => logger.warn({ err: error }, 'telemetry not written'));
    for (const counter of reply.counters)
      await events
        .increment(counter)
        .catch((error: unknown) => logger.warn({ err: error }, 'counter not written'));
    return reply;
  }
}

/** The text without the avatar's name where it only addresses it ("Dewey, 2" → "2"). */
function withoutAddress(text: string | undefined, names: readonly string[]): string | undefined {
  if (text === undefined) return undefined;
  let out = text.trim();
  for (const name of names) {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
    out = out
      .replace(new RegExp(`^@?${escaped}\\s*[,:!-]?\\s*`, 'iu'), '')
      .replace(new RegExp(`\\s*,?\\s*@?${escaped}\\s*[?!.]*$`, 'iu'), '');
  }
  return out;
}
