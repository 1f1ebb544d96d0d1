import { createScriptedModel } from '../adapters/llm/scriptedModel.js';
import { lazyEntityLookup } from '../adapters/sql/lazyEntityLookup.js';
import { MemoryHistory } from '../adapters/store/memory/memoryHistory.js';
import { MemoryOutbox } from '../adapters/store/memory/memoryOutbox.js';
import { type TerminalMessage, TerminalTransport } from '../adapters/terminal/terminalTransport.js';
import { scenarioAvatars } from '../app/scenarioAvatars.js';
import { createSimulatedRuntime, type SimulatedRuntime } from '../app/simulatedRuntime.js';
import type { CoordinationConfig } from '../config/coordinationConfig.js';
import { formatDuration, formatSimTime } from '../config/duration.js';
import { silentLogger } from '../logging/logger.js';
import type { Clock } from '../ports/clock.js';
import type { TurnModel } from '../ports/model.js';
import { type Scenario, scenarioConfigOverrides } from '../simulator/scenario.js';
import { attachConversationPrinter, type ConversationStats, formatCounts } from './conversationPrinter.js';
import { bolder, dimmer } from './conversationStyle.js';

/** How a scenario is played through the runtime. */
export interface PlayOptions {
  /** Base coordination config; the scenario's `config` is laid over it. */
  config: CoordinationConfig;
  /** Writes one line (no trailing newline). */
  write: (line: string) => void;
  color: boolean;
  /** Also print claims and suppressed candidates. */
  verbose?: boolean;
}

/** What a played scenario leaves behind, for the summary. */
export interface PlayResult {
  stats: ConversationStats;
  /** Simulated time from the first step to the last thing that happened (ms). */
  durationMs: number;
}

/** How long after the last step the tour keeps firing timers (threads expiring, follow-ups). */
const SETTLE_AFTER_SCRIPT_MS = 15 * 60_000;

/**
 * The offline model with a latency on the simulated clock, so delivered turns land a moment
 * after their claim, as they would with a real model (the scenario's `generationLatency`).
 */
function withLatency(model: TurnModel, clock: () => Clock | undefined, latencyMs: number): TurnModel {
  return {
    id: model.id,
    offline: model.offline,
    ...(model.readsPrompt !== undefined ? { readsPrompt: model.readsPrompt } : {}),
    ...(model.local !== undefined ? { local: model.local } : {}),
    async generateTurn(request) {
      const c = clock();
      if (c && latencyMs > 0) await c.sleep(latencyMs, request.signal);
      return model.generateTurn(request);
    },
  };
}

/**
 * Plays a scenario through the real Troupe runtime (channel actors, floor, turn pipeline,
 * routing, a {@link TerminalTransport}) on a simulated clock with the offline scripted model.
 * Each script step becomes a runtime event at its time; the clock then moves timer by timer, the
 * runtime settling in between, so the run finishes at once but prints simulated timestamps.
 * Everything the runtime delivers is printed as it is delivered.
 */
export async function playScenario(scenario: Scenario, options: PlayOptions): Promise<PlayResult> {
  const channel = { kind: 'terminal', id: scenario.channel };
  const avatars = scenarioAvatars(scenario);
  // The demo ERP starts only if an avatar with the lookup tool is asked something.
  const lookupTool = scenario.avatars.some((a) => a.tools?.includes('entity_lookup'))
    ? lazyEntityLookup({}, { logger: silentLogger() })
    : undefined;
  const humans = new Map(scenario.humans.map((h) => [h.id, h]));
  const transport = new TerminalTransport();
  let clock: Clock | undefined;
  const t = createSimulatedRuntime({
    avatars,
    config: { ...options.config, ...scenarioConfigOverrides(scenario) },
    model: withLatency(createScriptedModel(), () => clock, scenario.generationLatency),
    transports: [transport],
    store: { outbox: new MemoryOutbox(), history: new MemoryHistory() },
    logger: silentLogger(),
    // The tour shows creating a vendor and the database refusing a part, so both may be asked for.
    ...(lookupTool
      ? { lookup: { tool: lookupTool, composer: { config: { canCreateVendor: true, canCreatePart: true } } } }
      : {}),
  });
  clock = t.clock;
  const start = t.clock.now();
  const printer = attachConversationPrinter({
    runtime: t.runtime,
    transport,
    color: options.color,
    write: options.write,
    timestamp: () => formatSimTime(t.clock.now() - start),
    verbose: options.verbose ?? false,
    offlineMark: true,
  });
  const note = (text: string) => printer.write(`ℹ️  ${text}`);

  // Reply targets: labels of earlier steps, and the latest message overall or by someone.
  const labels = new Map<string, TerminalMessage>();
  const latest = (authorId?: string): TerminalMessage | undefined =>
    transport
      .recent()
      .reverse()
      .find((m) => authorId === undefined || m.author.id === authorId);
  const replyTarget = (ref: string | undefined) => {
    if (ref === undefined) return undefined;
    const target =
      ref === 'last' ? latest() : ref.startsWith('last:') ? latest(ref.slice(5)) : labels.get(ref);
    if (!target) return undefined;
    return {
      messageId: target.messageId,
      ...(target.author.kind === 'avatar' ? { avatarId: target.author.id } : {}),
    };
  };

  if (scenario.failures.length > 0) {
    note('this scenario scripts turn failures; only `troupe simulate` plays those, the runtime ignores them');
  }

  let time = 0;
  let summons = 0;
  for (const step of scenario.script) {
    if ('wait' in step) {
      time += step.wait;
      await t.advance(Math.max(0, start + time - t.clock.now()));
      continue;
    }
    time = step.at ?? time + (step.after ?? 0);
    await t.advance(Math.max(0, start + time - t.clock.now()));
    if ('narrate' in step) {
      printer.write(`📣 ${step.narrate}`);
    } else if ('summon' in step) {
      const by = humans.get(step.by) ?? { id: step.by, name: step.by };
      sendOrThrow(t, {
        type: 'avatar.summon',
        channel,
        avatarId: step.summon,
        by: { id: by.id, name: by.name },
        messageId: `s${++summons}`,
      });
      await t.settle();
    } else if ('dismiss' in step) {
      sendOrThrow(t, { type: 'avatar.dismiss', channel, avatarId: step.dismiss });
      await t.settle();
    } else if ('join' in step) {
      note(`${step.join} would join here; the runtime has no join event (summon, or make it resident)`);
    } else {
      const message = postScriptedMessage(step, { scenario, transport, humans, channel, replyTarget });
      if (step.label !== undefined) labels.set(step.label, message.posted);
      const result = t.runtime.send(message.event);
      if (result.accepted) await t.settle();
    }
  }

  const lastActivity = await runOutAfterScript(t);
  await t.stop();
  await lookupTool?.close();
  printer.detach();
  return { stats: printer.stats, durationMs: Math.max(time, lastActivity() - start) };
}

/** A summon or dismissal the script asks for: refused, it stops the tour with the runtime's error. */
function sendOrThrow(t: SimulatedRuntime, event: Parameters<SimulatedRuntime['runtime']['send']>[0]): void {
  const result = t.runtime.send(event);
  if (!result.accepted) throw result.error;
}

/** What posting one scripted message needs. */
interface ScriptedPost {
  scenario: Scenario;
  transport: TerminalTransport;
  humans: ReadonlyMap<string, { id: string; name: string }>;
  channel: { kind: string; id: string };
  replyTarget: (ref: string | undefined) => { messageId: string; avatarId?: string } | undefined;
}

type MessageStep = Extract<Scenario['script'][number], { say: string }>;

/** A scripted message shown in the terminal channel, and the runtime event it becomes. */
function postScriptedMessage(
  step: MessageStep,
  post: ScriptedPost,
): { posted: TerminalMessage; event: Parameters<SimulatedRuntime['runtime']['send']>[0] } {
  const { scenario, transport, humans, channel } = post;
  const replyTo = post.replyTarget(step.replyTo);
  const isHuman = 'human' in step;
  const authorId = isHuman ? step.human : step.avatar;
  const avatar = scenario.avatars.find((a) => a.id === authorId);
  const posted = transport.recordInbound({
    channelId: channel.id,
    author: isHuman
      ? { kind: 'human', id: authorId, name: humans.get(authorId)?.name ?? authorId }
      : {
          kind: 'avatar',
          id: authorId,
          name: avatar?.name ?? authorId,
          ...(avatar?.emoji !== undefined ? { emoji: avatar.emoji } : {}),
        },
    text: step.say,
    ...(replyTo ? { replyTo: { messageId: replyTo.messageId } } : {}),
  });
  const event = {
    type: 'channel.message' as const,
    channel,
    messageId: posted.messageId,
    author: isHuman
      ? { kind: 'human' as const, id: authorId, name: posted.author.name }
      : { kind: 'avatar' as const, id: authorId },
    text: step.say,
    ...(step.mentions ? { mentions: step.mentions } : {}),
    ...(replyTo ? { replyTo } : {}),
  };
  return { posted, event };
}

/**
 * Lets what the script set going run out (follow-ups, threads winding down or expiring), up to
 * {@link SETTLE_AFTER_SCRIPT_MS}; returns when the last activity was.
 */
async function runOutAfterScript(t: SimulatedRuntime): Promise<() => number> {
  const limit = t.clock.now() + SETTLE_AFTER_SCRIPT_MS;
  let lastActivity = t.clock.now();
  const activity = t.runtime.inspection$.subscribe((e) => {
    if (e.type !== 'actor.stopped') lastActivity = Math.max(lastActivity, e.at);
  });
  for (let due = t.clock.nextDue(); due !== undefined && due <= limit; due = t.clock.nextDue()) {
    await t.advance(Math.max(0, due - t.clock.now()));
  }
  activity.unsubscribe();
  return () => lastActivity;
}

/** The summary block after a played scenario. */
export function formatPlaySummary(name: string, result: PlayResult, color: boolean): string {
  const dim = dimmer(color);
  const s = result.stats;
  const ended: Record<string, number> = {};
  for (const thread of s.threads) {
    const outcome = thread.outcome ?? 'still active';
    ended[outcome] = (ended[outcome] ?? 0) + 1;
  }
  const lines = [
    bolder(color)(`── Summary: ${name} ──`),
    `Simulated time: ${formatSimTime(result.durationMs)} (${formatDuration(result.durationMs)}), played by the Troupe runtime with the offline scripted model`,
    `Messages: ${s.humanMessages} from people, ${s.avatarMessages} avatar messages delivered (by rung: ${formatCounts(s.byRung)})`,
    `Routing outcomes: ${s.routing.sent} sent, ${s.routing.failed} not delivered${s.routing.duplicate ? `, ${s.routing.duplicate} duplicates` : ''}${s.fallbacks ? `, ${s.fallbacks} fallbacks` : ''}`,
    `Threads: ${s.threads.length} opened — ${formatCounts(ended)}`,
  ];
  for (const thread of s.threads) {
    const turns = `${thread.turns ?? '?'}/${thread.maxTurns} turns`;
    const detail = thread.detail ? ` — ${thread.detail}` : '';
    lines.push(
      `  ${thread.id}  ${thread.mode.padEnd(7)} ${turns.padEnd(11)} ${thread.outcome ?? 'still active'}${detail} ${dim(`(${thread.participants.join(', ')})`)}`,
    );
  }
  lines.push(
    `Turns: ${s.turns.claimed} claimed, ${s.avatarMessages} delivered, ${s.turns.released} released, ${s.turns.failed} failed; ${s.suppressed} candidates held back`,
  );
  return lines.join('\n');
}
