import { clip } from '../adapters/llm/scriptedReplies.js';
import { formatDuration, formatSimTime } from '../config/duration.js';
import { terminalText } from '../delivery/terminalText.js';
import { moodOf } from '../textRules/sentiment.js';
import type { SimulationResult, TranscriptEntry } from './runScenario.js';

/** A sentiment with its sign: +0.75, -1.2, 0. */
function signed(n: number): string {
  return n > 0 ? `+${n}` : String(n);
}

/** How to render a simulation for people. */
export interface FormatOptions {
  /** ANSI dim for the secondary parts; only for a TTY (the CLI decides). Default false. */
  color?: boolean;
  /** Also print claims and suppressed candidates inline. Default false. */
  verbose?: boolean;
  /** Append the summary block. Default true. */
  summary?: boolean;
}

const dimmer = (color: boolean) => (text: string) => (color ? `\u001b[2m${text}\u001b[22m` : text);
const bolder = (color: boolean) => (text: string) => (color ? `\u001b[1m${text}\u001b[22m` : text);

/**
 * Renders a simulation as text: one line per transcript entry, such as
 * `[00:06.5] 🌙 Luna (offline): …  · rung mention — Luna was mentioned by Sam`, then the summary.
 */
export function formatTranscript(result: SimulationResult, options: FormatOptions = {}): string {
  const color = options.color ?? false;
  const dim = dimmer(color);
  const avatars = new Map(result.scenario.avatars.map((a) => [a.id, a]));
  const who = (id: string) => {
    const avatar = avatars.get(id);
    if (!avatar) return terminalText(id);
    return terminalText(avatar.emoji ? `${avatar.emoji} ${avatar.name}` : avatar.name);
  };
  const names = (ids: readonly string[]) =>
    terminalText(ids.map((id) => avatars.get(id)?.name ?? id).join(', '));
  const lines: string[] = [];
  const header = terminalText(
    `▶ ${result.scenario.name}${result.scenario.description ? ` — ${result.scenario.description.trim()}` : ''}`,
  );
  lines.push(bolder(color)(header));
  const models = modelsLine(result);
  if (models !== undefined && (options.verbose || models.named)) lines.push(dim(terminalText(models.text)));
  lines.push('');

  for (const raw of result.transcript) {
    // A scenario's words, names and reasons quoting them are text, never terminal control.
    const entry = safeEntry(raw);
    const line = formatEntry(entry, { dim, who, names, verbose: options.verbose ?? false });
    if (line !== undefined) lines.push(`${dim(`[${formatSimTime(entry.t)}]`)} ${line}`);
  }
  if (options.summary ?? true) lines.push('', formatSummary(result, { color }));
  return `${lines.join('\n')}\n`;
}

/**
 * Which model each avatar uses: in a simulation, the offline scripted model for every turn; the
 * models avatars name (`model:`) are said too, with whether any does.
 */
function modelsLine(result: SimulationResult): { text: string; named: boolean } | undefined {
  const named = result.models.filter((m) => m.named !== undefined);
  const played = `Models: every turn is played offline by the scripted model (${result.models[0]?.played ?? 'offline:scripted'})`;
  if (named.length === 0) return { text: `${played}; no avatar names a model of its own.`, named: false };
  const others = named.length < result.models.length ? '; the others, the default model' : '';
  const list = named.map((m) => `${m.name} names ${m.named}`).join(', ');
  return { text: `${played}, whatever an avatar names: ${list}${others}.`, named: true };
}

/** The entry with every string field made safe for a terminal (see `terminalText`). */
function safeEntry(entry: TranscriptEntry): TranscriptEntry {
  const copy: Record<string, unknown> = { ...entry };
  for (const [key, value] of Object.entries(copy))
    if (typeof value === 'string') copy[key] = terminalText(value);
  return copy as unknown as TranscriptEntry;
}

interface Helpers {
  dim: (text: string) => string;
  who: (id: string) => string;
  names: (ids: readonly string[]) => string;
  verbose: boolean;
}

function formatEntry(entry: TranscriptEntry, h: Helpers): string | undefined {
  const { dim, who, names } = h;
  switch (entry.type) {
    case 'human': {
      const reply = entry.replyTo?.avatarId ? dim(` (replying to ${names([entry.replyTo.avatarId])})`) : '';
      return `${entry.name}: ${entry.text}${reply}`;
    }
    case 'avatar': {
      if (entry.source === 'script')
        return `${who(entry.avatarId)}: ${entry.text}  ${dim('· scripted line')}`;
      const kind = entry.kind && entry.kind !== 'response' ? `${entry.kind}, ` : '';
      // A turn of a thread paid by the cascade lane answers the message that opened the thread.
      const paid = entry.lane === 'cascade' ? ' (cascade lane)' : '';
      const thread = entry.threadId ? ` · thread ${entry.threadId}${paid}` : '';
      const left =
        entry.summonTurnsLeft !== undefined
          ? ` · ${entry.summonTurnsLeft} guaranteed turn${entry.summonTurnsLeft === 1 ? '' : 's'} left`
          : '';
      const saw =
        h.verbose && entry.seen !== undefined
          ? ` · saw ${entry.seen} message${entry.seen === 1 ? '' : 's'}`
          : '';
      const why = dim(`· ${kind}rung ${entry.rung} — ${entry.reason}${thread}${left}${saw}`);
      return `${who(entry.avatarId)} (offline): ${entry.text}  ${why}`;
    }
    case 'summon': {
      const by = entry.byName ? `${entry.byName} summoned` : 'Summoned:';
      return `✨ ${by} ${who(entry.avatarId)} ${dim(`(${entry.turnsGranted} guaranteed turns)`)}`;
    }
    case 'dismiss':
      return `👋 ${who(entry.avatarId)} was dismissed`;
    case 'join':
      return `🚪 ${who(entry.avatarId)} joined the channel`;
    case 'thread.opened':
      return `🧵 thread ${entry.threadId} opened ${dim(
        `(${entry.mode}: ${names(entry.participants)}; up to ${entry.maxTurns} turns, expires ${formatSimTime(entry.expiresAt)} unless active)`,
      )}`;
    case 'thread.ended':
      return `🧵 thread ${entry.threadId} ended: ${entry.outcome} — ${entry.detail} ${dim(`(${entry.turns} turns)`)}`;
    case 'turn.failed':
      return `⚠️  ${who(entry.avatarId)}'s turn ${entry.turnId} failed during ${entry.stage}: ${entry.reason}`;
    case 'turn.released':
      return `↩️  claim ${entry.turnId} of ${who(entry.avatarId)} released ${dim(`(${entry.reason})`)}`;
    case 'rejected':
      return `⛔ ${entry.event} rejected: ${entry.code} — ${entry.message}`;
    case 'note':
      return `ℹ️  ${entry.message}`;
    case 'cap.notice':
      return `🔕 ${who(entry.avatarId)} to ${entry.to}: ${entry.text}`;
    case 'narration':
      return `📣 ${entry.text}`;
    case 'claim':
      if (!h.verbose) return undefined;
      return dim(
        `  · claim ${entry.turnId}: ${names([entry.avatarId])} (${entry.kind}, rung ${entry.rung}, lane ${entry.lane}) — ${entry.reason}`,
      );
    case 'suppressed':
      // Someone was spoken to who is not here: worth a line even without --verbose.
      if (entry.reason === 'not-present' && !h.verbose)
        return `🔇 ${names([entry.avatarId])} is not here, so nobody answers in ${names([entry.avatarId])}'s place ${dim(`(summon ${names([entry.avatarId])} to bring them in)`)}`;
      if (!h.verbose) return undefined;
      return dim(
        `  · suppressed ${names([entry.avatarId])}${entry.rung ? ` at rung ${entry.rung}` : ''} on ${entry.messageId}: ${entry.reason}${entry.detail ? ` — ${entry.detail}` : ''}`,
      );
  }
}

/** The summary block on its own: threads and exits, answers per human message, suppressions, rungs. */
export function formatSummary(result: SimulationResult, options: Pick<FormatOptions, 'color'> = {}): string {
  const color = options.color ?? false;
  const dim = dimmer(color);
  const s = result.summary;
  const nameOf = (id: string) => terminalText(result.scenario.avatars.find((a) => a.id === id)?.name ?? id);
  const counts = (record: Partial<Record<string, number>>) =>
    Object.entries(record)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || 'none';
  const lines: string[] = [];
  lines.push(bolder(color)(`── Summary: ${terminalText(s.scenario)} ──`));
  lines.push(
    `Simulated time: ${formatSimTime(s.durationMs)} (${formatDuration(s.durationMs)}), ${s.eventsProcessed} events${s.truncated ? ` — ${s.truncated}` : ''}`,
  );
  lines.push(
    `Messages: ${s.messages.human} human, ${s.messages.avatar} avatar (${s.messages.offline} offline turns, ${s.messages.scripted} scripted)`,
  );
  lines.push(`Avatar messages by rung: ${counts(s.avatarMessagesByRung)}`);
  const rate =
    s.exits.naturalRate === null ? '' : `, natural exits ${Math.round(s.exits.naturalRate * 100)}%`;
  lines.push(
    `Threads: ${s.threads.length} — concluded ${s.exits.concluded}, expired ${s.exits.expired}, exhausted ${s.exits.exhausted}${s.exits.active ? `, still active ${s.exits.active}` : ''}${rate}`,
  );
  for (const t of s.threads) {
    const detail = t.detail ? ` — ${terminalText(t.detail)}` : '';
    const mood = t.sentiment !== undefined ? `, mood ${moodOf(t.sentiment)} (${signed(t.sentiment)})` : '';
    lines.push(
      `  ${t.id}  ${t.mode.padEnd(7)} ${`${t.turns}/${t.maxTurns} turns`.padEnd(11)} ${t.outcome}${detail}${mood} ${dim(`(${terminalText(t.participantNames.join(', '))})`)}`,
    );
  }
  if (s.prompts.length > 0) lines.push('Per human message (responses; bot-to-bot cascade after it):');
  for (const p of s.prompts) {
    const said = terminalText(p.text);
    const text = p.kind === 'summon' ? `summons ${said.replace(/^summon /, '')}` : `"${clip(said, 40)}"`;
    const by = p.responders.length ? ` ${dim(`by ${p.responders.map(nameOf).join(', ')}`)}` : '';
    const split = p.kind === 'summon' ? `scheduled ${p.scheduled}` : `main ${p.main}`;
    lines.push(
      `  [${formatSimTime(p.t)}] ${terminalText(p.byName)}: ${text} → ${p.responses} (${split}, cascade ${p.cascade})${by}`,
    );
  }
  lines.push(
    `Suppressed candidates: ${s.suppressed.total}${s.suppressed.total ? ` — ${counts(s.suppressed.byReason)}` : ''}`,
  );
  lines.push(
    `Turns: ${s.turns.claimed} claimed, ${s.turns.delivered} delivered, ${s.turns.failed} failed, ${s.turns.released} released${s.rejected ? `; ${s.rejected} events rejected` : ''}`,
  );
  return lines.join('\n');
}
