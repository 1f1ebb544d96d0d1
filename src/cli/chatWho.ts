import type { AvatarDefinition } from '../actors/avatarDefinition.js';
import { dayUsageLines, dayUsageOf } from '../actors/usage/dayUsage.js';
import { formatDuration } from '../config/duration.js';
import type { FloorView } from '../floor/channelFloor.js';
import { avatarLabel } from './chatAvatars.js';
import { type ChatRoom, livesHere } from './chatRoom.js';
import { shortThreadId } from './conversationStyle.js';

type PresenceView = FloorView['present'][number];
type ThreadView = FloorView['threads'][number];

/**
 * Who is here, their threads and turns (the studio store's projection, as `troupe studio` shows
 * it), and today's usage of each avatar here with its caps, as `troupe usage` counts them.
 */
export function showWho(room: ChatRoom): void {
  const { avatars, dim, say } = room;
  const studio = room.studioStore.getSnapshot().context;
  const mine = studio.actors.filter((a) => a.channelKey === room.channelKey && a.status === 'active');
  const presences = new Map(
    mine
      .filter((a) => a.kind === 'presence')
      .map((a) => [String(a.context.id), a.context as Partial<PresenceView>]),
  );
  const threads = mine.filter((a) => a.kind === 'thread').map((a) => a.context as Partial<ThreadView>);
  const present = avatars.filter((a) => presences.has(a.id));
  const away = avatars.filter((a) => !presences.has(a.id));
  const describe = (a: AvatarDefinition) => describePresence(room, a, presences.get(a.id), threads);
  say(
    `Here in #${room.channel.id}: ${present.length > 0 ? present.map(describe).join(', ') : 'no avatars'}; and you, ${room.human.name}.`,
  );
  if (away.length > 0) say(`Not here: ${away.map(avatarLabel).join(', ')} ${dim('— /summon <name>')}`);
  for (const t of threads) {
    const names = (t.participants ?? []).map((id) => avatars.find((a) => a.id === id)?.name ?? id).join(', ');
    const left = formatDuration(Math.max(0, (t.expiresAt ?? 0) - Date.now()));
    say(
      `🧵 thread ${shortThreadId(String(t.id))} (${t.mode}: ${names}) ${dim(`${t.turnCount}/${t.maxTurns} turns, ends within ${left} unless active`)}`,
    );
  }
  showUsage(room, present);
}

/** Today's model usage (UTC day) of the avatars here and of every call, each with its daily caps. */
function showUsage(room: ChatRoom, present: readonly AvatarDefinition[]): void {
  const ledger = room.runtime.usage;
  if (!ledger) return;
  const [heading = '', ...lines] = dayUsageLines(dayUsageOf(ledger, room.config, present, Date.now()));
  room.say(heading);
  for (const line of lines) room.say(`  ${line}`);
}

/** An avatar in the channel with notes on why it is here, its threads, its conversation and turns. */
function describePresence(
  room: ChatRoom,
  a: AvatarDefinition,
  state: Partial<PresenceView> | undefined,
  threads: readonly Partial<ThreadView>[],
): string {
  const notes: string[] = [];
  if (livesHere(room, a)) notes.push('lives here');
  else if (state) notes.push('summoned');
  const inThreads = threads.filter((t) => t.participants?.includes(a.id));
  if (inThreads.length > 0)
    notes.push(`in ${inThreads.map((t) => `thread ${String(t.id).split(':').pop()}`).join(', ')}`);
  const now = Date.now();
  const until = state?.conversingUntil ?? 0;
  const conversing = state !== undefined && until > now;
  if (conversing) notes.push(`conversing for ${formatDuration(until - now)} more`);
  // A summon's guaranteed turns, while its conversation lasts.
  const turns = state?.summonTurns ?? 0;
  if (conversing && turns > 0) notes.push(`${turns} guaranteed turn${turns === 1 ? '' : 's'} left`);
  if (state?.turn !== undefined && state.turn !== 'ready') notes.push('speaking');
  return `${avatarLabel(a)}${notes.length > 0 ? ` ${room.dim(`(${notes.join(', ')})`)}` : ''}`;
}
