import type { Rung, SuppressionReason, ThreadMode, ThreadOutcome, TurnKind } from '../floor/floorTypes.js';
import type { AvatarMessageEntry, TranscriptEntry } from './runScenario.js';
import type { Scenario } from './scenario.js';

/** One conversation thread, start to end. */
export interface ThreadSummary {
  id: string;
  mode: ThreadMode;
  participants: string[];
  participantNames: string[];
  /** Simulated ms since the start. */
  openedAt: number;
  endedAt?: number;
  maxTurns: number;
  /** Turns the floor counted (delivered avatar turns while the thread was open). */
  turns: number;
  outcome: ThreadOutcome | 'active';
  detail?: string;
  /** Mean sentiment per turn (a light AFINN estimate), once the thread ended with scored turns. */
  sentiment?: number;
  /** Avatar id -> messages delivered in the thread. */
  speakers: Record<string, number>;
}

/** What one human message (or summon command) led to: the answers drawn on its budget. */
export interface PromptSummary {
  messageId: string;
  t: number;
  kind: 'message' | 'summon';
  byId: string;
  byName: string;
  text: string;
  /** All avatar messages anchored to it. */
  responses: number;
  /** Answers to the human message itself (main lane). */
  main: number;
  /** Bot-to-bot answers after it (cascade lane). */
  cascade: number;
  /** Summon greeting and follow-up (scheduled lane). */
  scheduled: number;
  /** Avatar ids that answered, in order, once each. */
  responders: string[];
}

/** The numbers a reader wants after a run. */
export interface SimulationSummary {
  scenario: string;
  /** Simulated time from the start to the last event. */
  durationMs: number;
  eventsProcessed: number;
  /** Set when a hard cap stopped the run. */
  truncated?: string;
  messages: { human: number; avatar: number; offline: number; scripted: number };
  /** Delivered avatar turns by the rung that chose them (scripted lines have none). */
  avatarMessagesByRung: Partial<Record<Rung, number>>;
  avatarMessagesByKind: Partial<Record<TurnKind, number>>;
  avatarMessagesByAvatar: Record<string, number>;
  threads: ThreadSummary[];
  /** Natural exits (concluded) vs timeouts (expired) vs turn limits (exhausted). */
  exits: {
    concluded: number;
    expired: number;
    exhausted: number;
    active: number;
    naturalRate: number | null;
  };
  prompts: PromptSummary[];
  suppressed: { total: number; byReason: Partial<Record<SuppressionReason, number>> };
  turns: { claimed: number; delivered: number; failed: number; released: number };
  rejected: number;
  notes: number;
}

function bump<K extends string>(record: Partial<Record<K, number>>, key: K): void {
  record[key] = (record[key] ?? 0) + 1;
}

/** Summarises a transcript: threads and how they ended, answers per prompt, suppressions, rungs. */
export function buildSummary(input: {
  scenario: Scenario;
  transcript: readonly TranscriptEntry[];
  durationMs: number;
  eventsProcessed: number;
  truncated?: string;
}): SimulationSummary {
  const { scenario, transcript } = input;
  const nameOf = (id: string) => scenario.avatars.find((a) => a.id === id)?.name ?? id;
  const threads = new Map<string, ThreadSummary>();
  const prompts = new Map<string, PromptSummary>();
  const byRung: Partial<Record<Rung, number>> = {};
  const byKind: Partial<Record<TurnKind, number>> = {};
  const byAvatar: Record<string, number> = {};
  const byReason: Partial<Record<SuppressionReason, number>> = {};
  const messages = { human: 0, avatar: 0, offline: 0, scripted: 0 };
  const turns = { claimed: 0, delivered: 0, failed: 0, released: 0 };
  let suppressed = 0;
  let rejected = 0;
  let notes = 0;

  const countAnswer = (entry: AvatarMessageEntry) => {
    const prompt = entry.anchorMessageId !== undefined ? prompts.get(entry.anchorMessageId) : undefined;
    if (!prompt) return;
    prompt.responses += 1;
    if (entry.lane === 'main' || entry.lane === 'cascade' || entry.lane === 'scheduled')
      prompt[entry.lane] += 1;
    if (!prompt.responders.includes(entry.avatarId)) prompt.responders.push(entry.avatarId);
  };

  for (const entry of transcript) {
    switch (entry.type) {
      case 'human':
        messages.human += 1;
        prompts.set(entry.messageId, {
          messageId: entry.messageId,
          t: entry.t,
          kind: 'message',
          byId: entry.authorId,
          byName: entry.name,
          text: entry.text,
          responses: 0,
          main: 0,
          cascade: 0,
          scheduled: 0,
          responders: [],
        });
        break;
      case 'summon':
        if (entry.messageId !== undefined) {
          prompts.set(entry.messageId, {
            messageId: entry.messageId,
            t: entry.t,
            kind: 'summon',
            byId: entry.byId ?? '',
            byName: entry.byName ?? '',
            text: `summon ${entry.name}`,
            responses: 0,
            main: 0,
            cascade: 0,
            scheduled: 0,
            responders: [],
          });
        }
        break;
      case 'avatar':
        messages.avatar += 1;
        byAvatar[entry.avatarId] = (byAvatar[entry.avatarId] ?? 0) + 1;
        if (entry.source === 'script') {
          messages.scripted += 1;
          break;
        }
        messages.offline += 1;
        turns.delivered += 1;
        if (entry.rung) bump(byRung, entry.rung);
        if (entry.kind) bump(byKind, entry.kind);
        countAnswer(entry);
        if (entry.threadId !== undefined) {
          const thread = threads.get(entry.threadId);
          if (thread) thread.speakers[entry.avatarId] = (thread.speakers[entry.avatarId] ?? 0) + 1;
        }
        break;
      case 'thread.opened':
        threads.set(entry.threadId, {
          id: entry.threadId,
          mode: entry.mode,
          participants: [...entry.participants],
          participantNames: entry.participants.map(nameOf),
          openedAt: entry.t,
          maxTurns: entry.maxTurns,
          turns: 0,
          outcome: 'active',
          speakers: {},
        });
        break;
      case 'thread.ended': {
        const thread = threads.get(entry.threadId);
        if (!thread) break;
        thread.outcome = entry.outcome;
        thread.detail = entry.detail;
        thread.turns = entry.turns;
        thread.endedAt = entry.t;
        if (entry.sentiment !== undefined) thread.sentiment = entry.sentiment;
        break;
      }
      case 'claim':
        turns.claimed += 1;
        break;
      case 'turn.failed':
        turns.failed += 1;
        break;
      case 'turn.released':
        turns.released += 1;
        break;
      case 'suppressed':
        suppressed += 1;
        bump(byReason, entry.reason);
        break;
      case 'rejected':
        rejected += 1;
        break;
      case 'note':
        notes += 1;
        break;
      default:
        break;
    }
  }

  // Threads still open at the end (only when a cap stopped the run): count what was delivered,
  // and list everyone who spoke in them.
  for (const thread of threads.values()) {
    for (const id of Object.keys(thread.speakers)) {
      if (!thread.participants.includes(id)) {
        thread.participants.push(id);
        thread.participantNames.push(nameOf(id));
      }
    }
    if (thread.outcome === 'active') thread.turns = Object.values(thread.speakers).reduce((a, b) => a + b, 0);
  }

  const list = [...threads.values()];
  const exits = {
    concluded: list.filter((t) => t.outcome === 'concluded').length,
    expired: list.filter((t) => t.outcome === 'expired').length,
    exhausted: list.filter((t) => t.outcome === 'exhausted').length,
    active: list.filter((t) => t.outcome === 'active').length,
    naturalRate: null as number | null,
  };
  const ended = exits.concluded + exits.expired + exits.exhausted;
  exits.naturalRate = ended > 0 ? Math.round((exits.concluded / ended) * 1000) / 1000 : null;

  return {
    scenario: scenario.name,
    durationMs: input.durationMs,
    eventsProcessed: input.eventsProcessed,
    ...(input.truncated ? { truncated: input.truncated } : {}),
    messages,
    avatarMessagesByRung: byRung,
    avatarMessagesByKind: byKind,
    avatarMessagesByAvatar: byAvatar,
    threads: list,
    exits,
    prompts: [...prompts.values()],
    suppressed: { total: suppressed, byReason },
    turns,
    rejected,
    notes,
  };
}
