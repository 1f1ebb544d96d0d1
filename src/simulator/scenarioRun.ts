import { SimulatedClock } from '../actors/clock.js';
import { SCRIPTED_MODEL_ID } from '../adapters/llm/scriptedModel.js';
import { scriptedReply } from '../adapters/llm/scriptedReplies.js';
import type { CoordinationConfig } from '../config/coordinationConfig.js';
import { ChannelFloor, type ChannelFloorOptions } from '../floor/channelFloor.js';
import { FloorDriver } from '../floor/floorDriver.js';
import type { AvatarProfile, FloorEffect, FloorEvent, TurnClaim } from '../floor/floorTypes.js';
import type { FloorLike, SimulationResult, TranscriptEntry } from './runScenario.js';
import type { Scenario, ScenarioFailure, ScriptStep } from './scenario.js';
import { SimulatedWitness } from './simulatedWitness.js';
import { buildSummary } from './summary.js';
import { claimFields, effectEntry } from './transcriptEntries.js';

/** A message's reference, as a later `replyTo` names it. */
type MessageRef = { messageId: string; avatarId?: string };

/** The limits and start of one run, resolved from its options. */
export interface ScenarioRunSetting {
  config: CoordinationConfig;
  /** Epoch ms of simulated time zero. */
  start: number;
  maxEvents: number;
  maxOvertimeMs: number;
  createFloor?: (options: ChannelFloorOptions) => FloorLike;
}

/**
 * One run of a scenario: the floor and its driver on a simulated clock, the transcript, the
 * script's cursor, and the bookkeeping of messages (for `replyTo`) and turns (claims per avatar,
 * released claims, who summoned whom).
 */
export class ScenarioRun {
  private readonly clock: SimulatedClock;
  private readonly roster: AvatarProfile[];
  private readonly avatarsById: Map<string, Scenario['avatars'][number]>;
  private readonly humansById: Map<string, Scenario['humans'][number]>;
  private readonly avatarNames: string[];
  private readonly floor: FloorLike;
  private readonly driver: FloorDriver;
  /** What each avatar's prompt would hold (the witness rule), and per turn how many messages that was. */
  private readonly witness: SimulatedWitness;
  private readonly seen = new Map<string, number>();
  private readonly transcript: TranscriptEntry[] = [];

  // Message bookkeeping, for `replyTo` references and message ids.
  private messageSeq = 0;
  private lastMessage: MessageRef | undefined;
  private readonly lastBy = new Map<string, MessageRef>();
  private readonly labels = new Map<string, MessageRef>();

  // Turn bookkeeping.
  private readonly claimsPerAvatar = new Map<string, number>();
  private readonly released = new Set<string>();
  private readonly pendingSummoner = new Map<string, { id: string; name: string; messageId: string }>();
  private processed = 0;
  private truncated: string | undefined;

  // The script's cursor.
  private cursor: number;
  private stepIndex = 0;
  private scriptEnd: number;
  private scriptDone = false;

  constructor(
    private readonly scenario: Scenario,
    private readonly setting: ScenarioRunSetting,
  ) {
    const { config, start } = setting;
    this.clock = new SimulatedClock(start);
    this.cursor = start;
    this.scriptEnd = start;
    this.roster = scenario.avatars.map(({ present: _present, model: _model, ...profile }) => profile);
    this.avatarsById = new Map(scenario.avatars.map((a) => [a.id, a]));
    this.humansById = new Map(scenario.humans.map((h) => [h.id, h]));
    this.avatarNames = scenario.avatars.flatMap((a) => [a.name, ...(a.aliases ?? [])]);
    const floorOptions: ChannelFloorOptions = {
      channelId: scenario.channel,
      config,
      roster: this.roster,
      present: scenario.avatars.filter((a) => a.present).map((a) => a.id),
      at: start,
    };
    this.floor = setting.createFloor ? setting.createFloor(floorOptions) : new ChannelFloor(floorOptions);
    this.witness = new SimulatedWitness(scenario.channel, config.witnessBackfill);
    for (const id of floorOptions.present ?? []) this.witness.arrived(id, start);
    // The floor's effects go to the transcript and claimed turns are played, through the one
    // driver every floor has (it also keeps a tick armed at the floor's next deadline).
    this.driver = new FloorDriver({
      floor: this.floor,
      clock: this.clock,
      hooks: {
        onEffect: (effect, event) => this.record(effect, event),
        onClaim: (turn) => this.scheduleTurn(turn),
        onStuckDeadline: (at) =>
          this.note(`the floor's deadline stayed at ${this.rel(at)}ms after three ticks`),
      },
    });
  }

  /** Plays the script, then runs until nothing is left or a cap is hit; the result and its summary. */
  run(): SimulationResult {
    const { scenario, setting, transcript } = this;
    this.scheduleNextStep();
    const lastEventAt = this.loop();
    if (this.truncated) this.note(`simulation ${this.truncated}; the floor still had work pending`);
    else {
      const left = this.floor.view().inFlight.length;
      if (left > 0)
        this.note(`the floor reports ${left} turn(s) still in flight with nothing scheduled to settle them`);
    }
    return {
      scenario,
      config: setting.config,
      models: scenario.avatars.map((a) => ({
        avatarId: a.id,
        name: a.name,
        ...(a.model !== undefined ? { named: a.model } : {}),
        played: SCRIPTED_MODEL_ID,
      })),
      startAt: setting.start,
      transcript,
      summary: buildSummary({
        scenario,
        transcript,
        durationMs: this.rel(lastEventAt),
        eventsProcessed: this.processed,
        ...(this.truncated ? { truncated: this.truncated } : {}),
      }),
    };
  }

  /** Earliest timer first, ties in scheduling order; returns when the last event ran. */
  private loop(): number {
    const { clock, setting } = this;
    let lastEventAt = setting.start;
    while (clock.pending > 0) {
      const due = clock.nextDue() ?? setting.start;
      if (this.processed >= setting.maxEvents) {
        this.truncated = `stopped after ${setting.maxEvents} events`;
        break;
      }
      if (this.scriptDone && due > this.scriptEnd + setting.maxOvertimeMs) {
        this.truncated = `stopped ${setting.maxOvertimeMs}ms after the script ended`;
        break;
      }
      clock.fireNext();
      this.processed += 1;
      lastEventAt = clock.now();
    }
    return lastEventAt;
  }

  /** Simulated ms since the start. */
  private rel(at: number): number {
    return at - this.setting.start;
  }

  private note(message: string): void {
    this.transcript.push({ t: this.rel(this.clock.now()), type: 'note', message });
  }

  private apply(event: FloorEvent): FloorEffect[] {
    return this.driver.apply(event);
  }

  private nextMessageId(): string {
    return `m${++this.messageSeq}`;
  }

  private remember(messageId: string, author: { human?: string; avatar?: string }, label?: string): void {
    const ref = author.avatar !== undefined ? { messageId, avatarId: author.avatar } : { messageId };
    this.lastMessage = ref;
    this.lastBy.set(author.avatar ?? author.human ?? '', ref);
    if (label !== undefined) this.labels.set(label, ref);
  }

  private record(effect: FloorEffect, event: FloorEvent): void {
    const t = this.rel(effect.at);
    if (effect.type === 'presence.summoned') this.witness.arrived(effect.avatarId, effect.at);
    else if (effect.type === 'presence.dismissed') this.witness.left(effect.avatarId, effect.at);
    switch (effect.type) {
      case 'turn.consumed': {
        // The avatar message entry stands for it; it learns the guaranteed turns left.
        if (effect.summonTurnsLeft === undefined) return;
        for (let i = this.transcript.length - 1; i >= 0; i--) {
          const entry = this.transcript[i];
          if (entry?.type === 'avatar' && entry.turnId === effect.turnId) {
            entry.summonTurnsLeft = effect.summonTurnsLeft;
            return;
          }
        }
        return;
      }
      case 'turn.released':
        this.released.add(effect.turnId);
        break;
      case 'presence.summoned': {
        const by = this.pendingSummoner.get(effect.avatarId);
        this.pendingSummoner.delete(effect.avatarId);
        this.transcript.push({
          t,
          type: 'summon',
          avatarId: effect.avatarId,
          name: this.nameOf(effect.avatarId),
          ...(by ? { byId: by.id, byName: by.name, messageId: by.messageId } : {}),
          turnsGranted: effect.turnsGranted,
        });
        return;
      }
    }
    const entry = effectEntry(effect, event, t, {
      rel: (at) => this.rel(at),
      nameOf: (avatarId) => this.nameOf(avatarId),
    });
    if (entry) this.transcript.push(entry);
  }

  private nameOf(avatarId: string): string {
    return this.avatarsById.get(avatarId)?.name ?? avatarId;
  }

  // ---- claimed turns: generate after the latency, then deliver (or fail as scripted).
  private scheduleTurn(claim: TurnClaim): void {
    const { scenario, clock } = this;
    const nth = (this.claimsPerAvatar.get(claim.avatarId) ?? 0) + 1;
    this.claimsPerAvatar.set(claim.avatarId, nth);
    const failure = scenario.failures.find((f) => f.avatar === claim.avatarId && f.nth === nth);
    clock.setTimer(claim.claimedAt + scenario.generationLatency, () => {
      // The floor may have released the claim meanwhile (for example on dismiss).
      if (this.released.has(claim.turnId)) return;
      const at = clock.now();
      if (failure?.stage === 'generation') return this.fail(claim, failure, at);
      this.seen.set(claim.turnId, this.witness.seenBy(claim.avatarId));
      this.apply({ type: 'turn.generated', at, turnId: claim.turnId });
      if (this.released.has(claim.turnId)) return;
      if (failure) return this.fail(claim, failure, at);
      this.deliver(claim, at);
    });
  }

  private fail(claim: TurnClaim, f: ScenarioFailure, at: number): void {
    const reason = f.reason ?? `scripted ${f.stage} failure`;
    this.transcript.push({
      t: this.rel(at),
      type: 'turn.failed',
      turnId: claim.turnId,
      avatarId: claim.avatarId,
      stage: f.stage,
      reason,
    });
    this.apply({ type: 'turn.failed', at, turnId: claim.turnId, reason });
  }

  private deliver(claim: TurnClaim, at: number): void {
    const avatar = this.avatarsById.get(claim.avatarId);
    const profile: AvatarProfile = avatar ?? { id: claim.avatarId, name: claim.avatarId };
    const spoken =
      claim.threadId !== undefined ? this.driver.spokenInThread(claim.threadId, claim.avatarId) : 0;
    const reply = scriptedReply({
      turn: claim,
      avatar: profile,
      isAvatar: (id) => this.avatarsById.has(id),
      greetingMaxChars: claim.context.maxChars ?? this.setting.config.greetingMaxChars,
      spokenInThread: spoken,
      avatarNames: this.avatarNames,
    });
    const messageId = this.nextMessageId();
    this.transcript.push({
      t: this.rel(at),
      type: 'avatar',
      messageId,
      avatarId: claim.avatarId,
      name: profile.name,
      ...(profile.emoji !== undefined ? { emoji: profile.emoji } : {}),
      text: reply.text,
      ...(reply.mentions.length > 0 ? { mentions: reply.mentions } : {}),
      source: 'offline',
      ...claimFields(claim),
      ...(claim.context.addressedById !== undefined ? { addressedById: claim.context.addressedById } : {}),
      farewell: reply.farewell,
      ...this.seenOf(claim.turnId),
    });
    this.remember(messageId, { avatar: claim.avatarId });
    this.witness.said(messageId, at, { kind: 'avatar', id: claim.avatarId, name: profile.name }, reply.text);
    this.apply({
      type: 'turn.delivered',
      at,
      turnId: claim.turnId,
      messageId,
      text: reply.text,
      ...(reply.mentions.length > 0 ? { mentions: reply.mentions } : {}),
    });
  }

  /** The count of messages the turn's prompt held, taken off the map. */
  private seenOf(turnId: string): { seen?: number } {
    const seen = this.seen.get(turnId);
    this.seen.delete(turnId);
    return seen === undefined ? {} : { seen };
  }

  // ---- the script: each step is scheduled when the previous one runs, at its own time.
  private scheduleNextStep(): void {
    const { scenario, setting, clock } = this;
    while (this.stepIndex < scenario.script.length) {
      const step = scenario.script[this.stepIndex] as ScriptStep;
      this.stepIndex += 1;
      if ('wait' in step) {
        this.cursor += step.wait;
        continue;
      }
      this.cursor =
        step.at !== undefined
          ? Math.max(this.cursor, setting.start + step.at)
          : this.cursor + (step.after ?? 0);
      clock.setTimer(this.cursor, () => {
        this.runStep(step);
        this.scheduleNextStep();
      });
      return;
    }
    // Trailing waits still let time pass, even when nothing else is scheduled.
    this.scriptEnd = this.cursor;
    this.scriptDone = true;
    if (this.cursor > clock.now()) clock.setTimer(this.cursor, () => {});
  }

  private runStep(step: ScriptStep): void {
    const at = this.clock.now();
    if ('summon' in step) {
      const human = this.humansById.get(step.by);
      const messageId = this.nextMessageId();
      this.pendingSummoner.set(step.summon, { id: step.by, name: human?.name ?? step.by, messageId });
      this.apply({
        type: 'summon',
        at,
        avatarId: step.summon,
        by: { id: step.by, name: human?.name ?? step.by },
        messageId,
      });
      this.pendingSummoner.delete(step.summon);
    } else if ('dismiss' in step) {
      this.apply({ type: 'dismiss', at, avatarId: step.dismiss });
    } else if ('narrate' in step) {
      this.transcript.push({ t: this.rel(at), type: 'narration', text: step.narrate });
    } else if ('join' in step) {
      const avatar = this.roster.find((a) => a.id === step.join);
      if (!avatar) return;
      this.transcript.push({ t: this.rel(at), type: 'join', avatarId: avatar.id, name: avatar.name });
      this.witness.arrived(avatar.id, at);
      this.apply({ type: 'avatar.join', at, avatar, present: true });
    } else if ('human' in step) {
      this.humanSays(step, at);
    } else if ('avatar' in step) {
      this.avatarSays(step, at);
    }
  }

  private humanSays(step: Extract<ScriptStep, { human: string }>, at: number): void {
    const human = this.humansById.get(step.human);
    const name = human?.name ?? step.human;
    const messageId = this.nextMessageId();
    const replyTo = this.resolveReplyTo(step.replyTo);
    this.transcript.push({
      t: this.rel(at),
      type: 'human',
      messageId,
      authorId: step.human,
      name,
      text: step.say,
      ...(step.mentions ? { mentions: step.mentions } : {}),
      ...(replyTo ? { replyTo } : {}),
    });
    this.remember(messageId, { human: step.human }, step.label);
    this.witness.said(messageId, at, { kind: 'human', id: step.human, name }, step.say);
    this.apply({
      type: 'message',
      at,
      messageId,
      author: { kind: 'human', id: step.human, name },
      text: step.say,
      ...(step.mentions ? { mentions: step.mentions } : {}),
      ...(replyTo ? { replyTo } : {}),
    });
  }

  private avatarSays(step: Extract<ScriptStep, { avatar: string }>, at: number): void {
    const avatar = this.avatarsById.get(step.avatar);
    const messageId = this.nextMessageId();
    const replyTo = this.resolveReplyTo(step.replyTo);
    this.transcript.push({
      t: this.rel(at),
      type: 'avatar',
      messageId,
      avatarId: step.avatar,
      name: avatar?.name ?? step.avatar,
      ...(avatar?.emoji !== undefined ? { emoji: avatar.emoji } : {}),
      text: step.say,
      ...(step.mentions ? { mentions: step.mentions } : {}),
      ...(replyTo ? { replyTo } : {}),
      source: 'script',
    });
    this.remember(messageId, { avatar: step.avatar }, step.label);
    this.witness.said(
      messageId,
      at,
      { kind: 'avatar', id: step.avatar, name: avatar?.name ?? step.avatar },
      step.say,
    );
    this.apply({
      type: 'message',
      at,
      messageId,
      author: { kind: 'avatar', id: step.avatar },
      text: step.say,
      ...(step.mentions ? { mentions: step.mentions } : {}),
      ...(replyTo ? { replyTo } : {}),
    });
  }

  private resolveReplyTo(ref: string | undefined): MessageRef | undefined {
    if (ref === undefined) return undefined;
    const found =
      ref === 'last'
        ? this.lastMessage
        : ref.startsWith('last:')
          ? this.lastBy.get(ref.slice(5))
          : this.labels.get(ref);
    if (!found) this.note(`replyTo "${ref}" found no message yet; sent as a plain message`);
    return found;
  }
}
