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

/** The counts a pass over the transcript builds up. */
interface Tally {
  nameOf: (id: string) => string;
  threads: Map<string, ThreadSummary>;
  prompts: Map<string, PromptSummary>;
  byRung: Partial<Record<Rung, number>>;
  byKind: Partial<Record<TurnKind, number>>;
  byAvatar: Record<string, number>;
  byReason: Partial<Record<SuppressionReason, number>>;
  messages: SimulationSummary['messages'];
  turns: SimulationSummary['turns'];
  suppressed: number;
  rejected: number;
  notes: number;
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
  const tally: Tally = {
    nameOf: (id) => scenario.avatars.find((a) => a.id === id)?.name ?? id,
    threads: new Map(),
    prompts: new Map(),
    byRung: {},
    byKind: {},
    byAvatar: {},
    byReason: {},
    messages: { human: 0, avatar: 0, offline: 0, scripted: 0 },
    turns: { claimed: 0, delivered: 0, failed: 0, released: 0 },
    suppressed: 0,
    rejected: 0,
    notes: 0,
  };
  for (const entry of transcript) recordEntry(tally, entry);
  finishOpenThreads(tally);
  const list = [...tally.threads.values()];
  return {
    scenario: scenario.name,
    durationMs: input.durationMs,
    eventsProcessed: input.eventsProcessed,
    ...(input.truncated ? { truncated: input.truncated } : {}),
    messages: tally.messages,
    avatarMessagesByRung: tally.byRung,
    avatarMessagesByKind: tally.byKind,
    avatarMessagesByAvatar: tally.byAvatar,
    threads: list,
    exits: exitsOf(list),
    prompts: [...tally.prompts.values()],
    suppressed: { total: tally.suppressed, byReason: tally.byReason },
    turns: tally.turns,
    rejected: tally.rejected,
    notes: tally.notes,
  };
}

function recordEntry(tally: Tally, entry: TranscriptEntry): void {
  switch (entry.type) {
    case 'human':
      tally.messages.human += 1;
      tally.prompts.set(
        entry.messageId,
        newPrompt(entry.messageId, entry.t, 'message', entry.authorId, entry.name, entry.text),
      );
      break;
    case 'summon':
      if (entry.messageId !== undefined) {
        tally.prompts.set(
          entry.messageId,
          newPrompt(
            entry.messageId,
            entry.t,
            'summon',
            entry.byId ?? '',
            entry.byName ?? '',
            `summon ${entry.name}`,
          ),
        );
      }
      break;
    case 'avatar':
      recordAvatarMessage(tally, entry);
      break;
    case 'thread.opened':
      tally.threads.set(entry.threadId, {
        id: entry.threadId,
        mode: entry.mode,
        participants: [...entry.participants],
        participantNames: entry.participants.map(tally.nameOf),
        openedAt: entry.t,
        maxTurns: entry.maxTurns,
        turns: 0,
        outcome: 'active',
        speakers: {},
      });
      break;
    case 'thread.ended': {
      const thread = tally.threads.get(entry.threadId);
      if (!thread) break;
      thread.outcome = entry.outcome;
      thread.detail = entry.detail;
      thread.turns = entry.turns;
      thread.endedAt = entry.t;
      if (entry.sentiment !== undefined) thread.sentiment = entry.sentiment;
      break;
    }
    case 'claim':
      tally.turns.claimed += 1;
      break;
    case 'turn.failed':
      tally.turns.failed += 1;
      break;
    case 'turn.released':
      tally.turns.released += 1;
      break;
    case 'suppressed':
      tally.suppressed += 1;
      bump(tally.byReason, entry.reason);
      break;
    case 'rejected':
      tally.rejected += 1;
      break;
    case 'note':
      tally.notes += 1;
      break;
    default:
      break;
  }
}

function newPrompt(
  messageId: string,
  t: number,
  kind: PromptSummary['kind'],
  byId: string,
  byName: string,
  text: string,
): PromptSummary {
  return {
    messageId,
    t,
    kind,
    byId,
    byName,
    text,
    responses: 0,
    main: 0,
    cascade: 0,
    scheduled: 0,
    responders: [],
  };
}

function recordAvatarMessage(tally: Tally, entry: AvatarMessageEntry): void {
  tally.messages.avatar += 1;
  tally.byAvatar[entry.avatarId] = (tally.byAvatar[entry.avatarId] ?? 0) + 1;
  if (entry.source === 'script') {
    tally.messages.scripted += 1;
    return;
  }
  tally.messages.offline += 1;
  tally.turns.delivered += 1;
  if (entry.rung) bump(tally.byRung, entry.rung);
  if (entry.kind) bump(tally.byKind, entry.kind);
  countAnswer(tally.prompts, entry);
  if (entry.threadId !== undefined) {
    const thread = tally.threads.get(entry.threadId);
    if (thread) thread.speakers[entry.avatarId] = (thread.speakers[entry.avatarId] ?? 0) + 1;
  }
}

/** Counts an avatar message against the prompt it answers, by lane. */
function countAnswer(prompts: ReadonlyMap<string, PromptSummary>, entry: AvatarMessageEntry): void {
  const prompt = entry.anchorMessageId !== undefined ? prompts.get(entry.anchorMessageId) : undefined;
  if (!prompt) return;
  prompt.responses += 1;
  if (entry.lane === 'main' || entry.lane === 'cascade' || entry.lane === 'scheduled')
    prompt[entry.lane] += 1;
  if (!prompt.responders.includes(entry.avatarId)) prompt.responders.push(entry.avatarId);
}

/**
 * Threads still open at the end (only when a cap stopped the run): count what was delivered, and
 * list everyone who spoke in them.
 */
function finishOpenThreads(tally: Tally): void {
  for (const thread of tally.threads.values()) {
    for (const id of Object.keys(thread.speakers)) {
      if (!thread.participants.includes(id)) {
        thread.participants.push(id);
        thread.participantNames.push(tally.nameOf(id));
      }
    }
    if (thread.outcome === 'active') thread.turns = Object.values(thread.speakers).reduce((a, b) => a + b, 0);
  }
}

function exitsOf(list: readonly ThreadSummary[]): SimulationSummary['exits'] {
  const exits = {
    concluded: list.filter((t) => t.outcome === 'concluded').length,
    expired: list.filter((t) => t.outcome === 'expired').length,
    exhausted: list.filter((t) => t.outcome === 'exhausted').length,
    active: list.filter((t) => t.outcome === 'active').length,
    naturalRate: null as number | null,
  };
  const ended = exits.concluded + exits.expired + exits.exhausted;
  exits.naturalRate = ended > 0 ? Math.round((exits.concluded / ended) * 1000) / 1000 : null;
  return exits;
}
