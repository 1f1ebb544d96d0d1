import {
  type AutocompleteInteraction,
  type ChatInputCommandInteraction,
  type Client,
  type GuildMember,
  type Interaction,
  MessageFlags,
  PermissionFlagsBits,
  PermissionsBitField,
} from 'discord.js';
import { filter, firstValueFrom, map, type Observable, race, Subject, timer } from 'rxjs';
import { formatDuration } from '../../config/duration.js';
import { clipText } from '../../delivery/clipText.js';
import type { FloorView } from '../../floor/floorView.js';
import { type Logger, silentLogger } from '../../logging/logger.js';
import { takeDailyAllowance } from '../../ports/dailyAllowance.js';
import type { ChannelRef } from '../../ports/outgoingResponse.js';
import type { RoutingOutcome } from '../../ports/routingOutcome.js';
import type { TroupeStore } from '../../ports/store.js';
import { TroupeError } from '../../ports/troupeError.js';
import { avatarsStartingWith, findAvatarByQuery } from '../../textRules/avatarQuery.js';
import { avatarsNow, type DiscordAvatar, type DiscordAvatars } from './discordInbound.js';
import { DISCORD_MAX_MESSAGE, type DiscordTransport } from './discordTransport.js';

/** What the commands need of a runtime (a Troupe `Runtime` has all of it). */
export interface DiscordRuntimeHandle {
  send(event: unknown): { accepted: boolean; error?: { code: string; message: string } };
  readonly outcomes$: Observable<RoutingOutcome>;
  open(channel: ChannelRef): Promise<FloorView>;
  /**
   * The avatar a name nobody has summoned creates (when the runtime's creation is on; it refuses
   * with `TROUPE_AVATAR_CREATION_OFF` otherwise). Absent: `/summon` only finds avatars.
   */
  createAvatar?(request: {
    name: string;
    by: { id: string; name: string };
    channel?: ChannelRef;
  }): Promise<{ avatar: DiscordAvatar & { persona?: string | undefined }; created: boolean }>;
  /** Forgets an avatar summoning created (`/forget`). Absent: `/forget` says it cannot. */
  forgetAvatar?(nameOrId: string): Promise<DiscordAvatar>;
}

/** Who may summon and how often. */
export interface SummonRules {
  /** Role ids or names allowed to summon; empty: everyone. */
  roles: readonly string[];
  /** Summons per person per day (UTC); 0: no limit. */
  perDay: number;
}

/** How a {@link DiscordCommandHandler} is made. */
export interface DiscordCommandHandlerOptions {
  client: Client;
  runtime: DiscordRuntimeHandle;
  /** The avatars, or a function giving them as they are now (summoning may create some). */
  avatars: DiscordAvatars;
  store: Pick<TroupeStore, 'documents' | 'processed'>;
  transport: DiscordTransport;
  summon: SummonRules;
  /** The effective settings for `/troupe config`, secrets already masked. */
  describeConfig?: () => Record<string, string>;
  /** Today's usage per avatar with the caps, as lines, for `/troupe usage`. */
  describeUsage?: () => string[];
  /** Why a daily cap keeps the avatar quiet now, in words, or undefined (for `/avatars`). */
  cappedBy?: (avatarId: string) => string | undefined;
  /** How long `/summon` waits for the greeting before it answers anyway (default 20 s). */
  greetingTimeoutMs?: number;
  /** Epoch ms, for the daily limit. Default `Date.now`. */
  now?: () => number;
  logger?: Logger;
}

const SUMMONS = 'discord-summons';
const INTERACTIONS = 'discord-interactions';
const NEEDED = [
  ['View Channel', PermissionFlagsBits.ViewChannel],
  ['Send Messages', PermissionFlagsBits.SendMessages],
  ['Manage Webhooks', PermissionFlagsBits.ManageWebhooks],
  ['Read Message History', PermissionFlagsBits.ReadMessageHistory],
] as const;
const fold = (s: string) => s.normalize('NFKC').toLocaleLowerCase('en');

/**
 * Answers Troupe's slash commands: `/summon`, `/dismiss` (with autocomplete over the avatars; the
 * value may be an id or a name in any case), `/avatars` and the admin-only `/forget`, `/troupe
 * config` and `/troupe usage`. `/summon` with a name nobody has creates the avatar when the
 * runtime's creation is on (roles as for summoning; the runtime keeps the daily limit per person).
 * Replies are ephemeral (only the person who asked sees them); `/summon` waits on the model, so
 * it is deferred at once (Discord's 3-second deadline) and answered when the greeting is out. An
 * interaction delivered twice is answered once (the store's processed ids, shared by shards).
 */
export class DiscordCommandHandler {
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly stopping$ = new Subject<void>();
  private stopped = false;

  constructor(private readonly options: DiscordCommandHandlerOptions) {
    this.log = options.logger ?? silentLogger();
    this.now = options.now ?? Date.now;
  }

  /** The avatars as they are now. */
  private get cast(): readonly DiscordAvatar[] {
    return avatarsNow(this.options.avatars);
  }

  /** Stops waiting for greetings: a `/summon` in progress answers at once (the bot is stopping). */
  stopWaiting(): void {
    this.stopped = true;
    this.stopping$.next();
  }

  /** Handles one interaction; never throws (a failure is told to the person and logged). */
  async handle(interaction: Interaction): Promise<void> {
    try {
      if (interaction.isAutocomplete()) {
        await this.autocomplete(interaction);
        return;
      }
      if (!interaction.isChatInputCommand()) return;
      const first = await this.options.store.processed.markProcessed(
        INTERACTIONS,
        interaction.id,
        this.now(),
      );
      if (!first) {
        this.log.debug({ interactionId: interaction.id }, 'interaction already handled; ignored');
        return;
      }
      switch (interaction.commandName) {
        case 'summon':
          await this.summon(interaction);
          return;
        case 'dismiss':
          await this.dismiss(interaction);
          return;
        case 'avatars':
          await this.avatars(interaction);
          return;
        case 'forget':
          await this.forget(interaction);
          return;
        case 'troupe':
          await this.admin(interaction);
          return;
        default:
          await this.tell(interaction, `Troupe has no /${interaction.commandName} command.`);
      }
    } catch (error) {
      this.log.warn({ err: error, interactionId: interaction.id }, 'slash command failed');
      if (interaction.isChatInputCommand())
        await this.tell(interaction, 'Something went wrong handling that command; it has been logged.').catch(
          () => undefined,
        );
    }
  }

  /** Up to 25 avatars whose id, name or alias starts with (then contains) what was typed. */
  private async autocomplete(interaction: AutocompleteInteraction): Promise<void> {
    const typed = fold(String(interaction.options.getFocused() ?? '').trim());
    const labels = (a: DiscordAvatar) => [a.id, a.name, ...(a.aliases ?? [])].map(fold);
    // `/forget` offers only the avatars summoning created: the others cannot be forgotten.
    const offered = this.cast.filter((a) => interaction.commandName !== 'forget' || a.created !== undefined);
    const starts = offered.filter((a) => labels(a).some((l) => l.startsWith(typed)));
    const contains = offered.filter((a) => !starts.includes(a) && labels(a).some((l) => l.includes(typed)));
    await interaction.respond(
      [...starts, ...contains].slice(0, 25).map((a) => ({
        name: (a.emoji ? `${a.emoji} ${a.name}` : a.name).slice(0, 100),
        value: a.id,
      })),
    );
  }

  private async summon(interaction: ChatInputCommandInteraction): Promise<void> {
    // Deferred first: the checks below read the store, and the greeting waits on the model.
    await interaction.deferReply({ flags: MessageFlags.Ephemeral });
    const raw = interaction.options.getString('avatar', true);
    const found = this.find(raw);
    const refusal = this.roleRefusal(interaction);
    if (refusal) {
      await this.tell(interaction, found ? refusal : this.unknown(raw));
      return;
    }
    const channel: ChannelRef = { kind: 'discord', id: interaction.channelId };
    const made = found ? { avatar: found, note: '' } : await this.created(interaction, raw, channel);
    if (typeof made === 'string') {
      await this.tell(interaction, made);
      return;
    }
    const { avatar, note } = made;
    // The daily limit counts arrivals: calling an avatar that is already here costs nothing.
    const present = (await this.options.runtime.open(channel)).present.some((p) => p.id === avatar.id);
    const limit = present ? undefined : await this.countSummon(interaction.user.id);
    if (limit) {
      await this.tell(interaction, limit);
      return;
    }
    const timeoutMs = this.options.greetingTimeoutMs ?? 20_000;
    const greeted = firstValueFrom(
      race(
        this.options.runtime.outcomes$.pipe(
          filter(
            (o) =>
              o.channel.kind === 'discord' && o.channel.id === channel.id && o.origin.avatarId === avatar.id,
          ),
        ),
        timer(timeoutMs).pipe(map(() => undefined)),
        this.stopping$.pipe(map(() => undefined)),
      ),
    );
    const result = this.options.runtime.send({
      type: 'avatar.summon',
      channel,
      avatarId: avatar.id,
      by: { id: interaction.user.id, name: personName(interaction) },
    });
    if (!result.accepted) {
      await this.tell(
        interaction,
        `Could not summon ${label(avatar)}: ${result.error?.message ?? 'refused'}`,
      );
      return;
    }
    const outcome = this.stopped ? undefined : await greeted;
    if (outcome && !outcome.sent) {
      await this.tell(
        interaction,
        `${note}${label(avatar)} is here but could not speak in this channel: ${outcome.error?.message ?? 'the message was not sent'}`,
      );
      return;
    }
    await this.tell(interaction, `${note}${label(avatar)} is here${outcome ? ' and said hello' : ''}.`);
  }

  /**
   * The avatar summoning `name` creates (or finds: another shard made it), with a line telling
   * what was created; else what to tell the person.
   */
  private async created(
    interaction: ChatInputCommandInteraction,
    name: string,
    channel: ChannelRef,
  ): Promise<{ avatar: DiscordAvatar; note: string } | string> {
    const create = this.options.runtime.createAvatar;
    if (!create) return this.unknown(name);
    const several = avatarsStartingWith(this.cast, name);
    if (several.length > 0)
      return `“${name.slice(0, 100)}” could be ${several.map(label).join(' or ')}; type more of the name.`;
    try {
      const made = await create.call(this.options.runtime, {
        name: name.slice(0, 100),
        by: { id: interaction.user.id, name: personName(interaction) },
        channel,
      });
      const note = made.created
        ? `✨ Created ${label(made.avatar)}: ${clipText(made.avatar.persona ?? '', 600)}\n`
        : '';
      return { avatar: made.avatar, note };
    } catch (error) {
      if (!TroupeError.isInstance(error)) throw error;
      if (error.code === 'TROUPE_AVATAR_CREATION_OFF') return this.unknown(name);
      return error.message;
    }
  }

  /** `/forget`: removes an avatar summoning created, from every channel and the store (Manage Server). */
  private async forget(interaction: ChatInputCommandInteraction): Promise<void> {
    if (!interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild)) {
      await this.tell(interaction, '/forget is for server admins (Manage Server).');
      return;
    }
    const forget = this.options.runtime.forgetAvatar;
    if (!forget) {
      await this.tell(interaction, 'This bot cannot forget avatars.');
      return;
    }
    const raw = interaction.options.getString('avatar', true);
    try {
      const gone = await forget.call(this.options.runtime, this.find(raw)?.id ?? raw);
      await this.tell(interaction, `${label(gone)} is forgotten: gone from every channel and the store.`);
    } catch (error) {
      if (!TroupeError.isInstance(error)) throw error;
      await this.tell(interaction, error.message);
    }
  }

  private async dismiss(interaction: ChatInputCommandInteraction): Promise<void> {
    const avatar = this.find(interaction.options.getString('avatar', true));
    if (!avatar) {
      await this.tell(interaction, this.unknown(interaction.options.getString('avatar', true)));
      return;
    }
    const channel: ChannelRef = { kind: 'discord', id: interaction.channelId };
    const view = await this.options.runtime.open(channel);
    if (!view.present.some((p) => p.id === avatar.id)) {
      await this.tell(interaction, `${label(avatar)} is not in this channel.`);
      return;
    }
    const result = this.options.runtime.send({ type: 'avatar.dismiss', channel, avatarId: avatar.id });
    await this.tell(
      interaction,
      result.accepted
        ? `${label(avatar)} leaves this channel.`
        : `Could not dismiss ${label(avatar)}: ${result.error?.message ?? 'refused'}`,
    );
  }

  private async avatars(interaction: ChatInputCommandInteraction): Promise<void> {
    const channel: ChannelRef = { kind: 'discord', id: interaction.channelId };
    const view = await this.options.runtime.open(channel);
    const lines: string[] = [];
    const missing = this.missingPermissions(interaction);
    const problems = this.options.transport.problems(interaction.channelId);
    if (missing.length > 0)
      lines.push(
        `⚠️ The bot lacks ${missing.join(', ')} here, so avatars cannot speak. Ask an admin to grant it.`,
      );
    for (const p of problems) if (missing.length === 0) lines.push(`⚠️ ${p.message}`);
    const now = view.now;
    const present = view.present.map((p) => {
      const avatar = this.cast.find((a) => a.id === p.id);
      const parts = [`**${avatar ? label(avatar) : p.name}**`];
      if (p.summonTurns > 0) parts.push(`${p.summonTurns} summon turn${p.summonTurns === 1 ? '' : 's'} left`);
      if (p.conversing) parts.push(`in conversation for ${formatDuration(p.conversingUntil - now)}`);
      if (p.cooldownUntil > now) parts.push(`cooling down ${formatDuration(p.cooldownUntil - now)}`);
      const capped = this.options.cappedBy?.(p.id);
      if (capped !== undefined) parts.push(`capped: ${capped}`);
      return `• ${parts.join(' — ')}`;
    });
    lines.push(
      present.length > 0
        ? `Here now:\n${present.join('\n')}`
        : 'Nobody is here. Use /summon to bring an avatar.',
    );
    const threads = view.threads
      .filter((t) => t.status === 'active')
      .map(
        (t) =>
          `• ${t.participants.map((id) => this.nameOf(id)).join(' ↔ ')} — turn ${t.turnCount} of ${t.maxTurns}, ends in ${formatDuration(Math.max(0, t.expiresAt - now))}`,
      );
    if (threads.length > 0) lines.push(`Open threads:\n${threads.join('\n')}`);
    const away = this.cast.filter((a) => !view.present.some((p) => p.id === a.id));
    if (away.length > 0) lines.push(`Can be summoned: ${away.map(label).join(', ')}`);
    const made = this.cast.filter((a) => a.created !== undefined);
    if (made.length > 0)
      lines.push(
        `Created by summoning (/forget removes them): ${made.map((a) => `${label(a)} (by ${a.created?.by.name})`).join(', ')}`,
      );
    await this.tell(interaction, lines.join('\n\n'));
  }

  /** `/troupe config` and `/troupe usage`: for members with Manage Server only. */
  private async admin(interaction: ChatInputCommandInteraction): Promise<void> {
    const sub = interaction.options.getSubcommand(false) ?? 'config';
    if (!interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild)) {
      await this.tell(interaction, `/troupe ${sub} is for server admins (Manage Server).`);
      return;
    }
    if (sub === 'usage') await this.usage(interaction);
    else await this.config(interaction);
  }

  private async usage(interaction: ChatInputCommandInteraction): Promise<void> {
    const lines = this.options.describeUsage?.() ?? ['This bot records no usage.'];
    await this.tell(interaction, fitLines(lines, DISCORD_MAX_MESSAGE, '`troupe usage` shows them all.'));
  }

  private async config(interaction: ChatInputCommandInteraction): Promise<void> {
    const settings = this.options.describeConfig?.() ?? {};
    const width = Math.max(0, ...Object.keys(settings).map((k) => k.length));
    const body = Object.entries(settings)
      .map(([k, v]) => `${k.padEnd(width)}  ${v}`)
      .join('\n')
      .replace(/`/gu, 'ˋ');
    const head = "Troupe's effective settings:\n```\n";
    // Clipped inside the code block, so the block still closes.
    const shown = clipText(body, DISCORD_MAX_MESSAGE - head.length - 4);
    await this.tell(interaction, `${head}${shown}\n\`\`\``);
  }

  /** An ephemeral answer, whether or not the interaction was deferred. */
  private async tell(interaction: ChatInputCommandInteraction, content: string): Promise<void> {
    if (interaction.deferred || interaction.replied) await interaction.editReply(fitContent(content));
    else await interaction.reply({ content: fitContent(content), flags: MessageFlags.Ephemeral });
  }

  private find(raw: string): DiscordAvatar | undefined {
    return findAvatarByQuery(this.cast, raw);
  }

  private unknown(raw: string): string {
    const list = this.cast.map(label).join(', ');
    return `No avatar called “${raw.slice(0, 100)}”. Avatars: ${list}.`.slice(0, 2000);
  }

  private nameOf(id: string): string {
    return this.cast.find((a) => a.id === id)?.name ?? id;
  }

  /** Why this person may not summon, if the summon roles leave them out. */
  private roleRefusal(interaction: ChatInputCommandInteraction): string | undefined {
    const allowed = this.options.summon.roles;
    if (allowed.length === 0) return undefined;
    const member = interaction.member;
    const roleIds: string[] = Array.isArray(member?.roles)
      ? (member.roles as string[])
      : [...((member as GuildMember | null)?.roles.cache.keys() ?? [])];
    const names = roleIds
      .map((id) => interaction.guild?.roles.cache.get(id)?.name)
      .filter((n) => n !== undefined);
    const wanted = allowed.map(fold);
    const ok =
      roleIds.some((id) => wanted.includes(fold(id))) ||
      names.some((n) => wanted.includes(fold(n as string)));
    if (ok) return undefined;
    const shown = allowed.map((r) => (/^\d+$/u.test(r) ? `<@&${r}>` : `@${r}`)).join(', ');
    return `Summoning here needs one of these roles: ${shown}.`;
  }

  /** Counts a summon that brings an avatar in against the person's daily limit; the refusal when it is used up. */
  private async countSummon(userId: string): Promise<string | undefined> {
    const perDay = this.options.summon.perDay;
    const allowance = await takeDailyAllowance(this.options.store.documents, {
      collection: SUMMONS,
      key: userId,
      perDay,
      now: this.now(),
      logger: this.log,
    });
    if (allowance.taken) return undefined;
    if (allowance.reason === 'busy') return 'Too many summons at once; try again in a moment.';
    return `You have used your ${perDay} summons for today. You can summon again after midnight UTC (in ${formatDuration(allowance.resetsInMs)}).`;
  }

  /** Permissions the bot needs in this channel and lacks, per discord.js's cache. */
  private missingPermissions(interaction: ChatInputCommandInteraction): string[] {
    const channel = interaction.channel;
    const me = this.options.client.user;
    if (!channel || channel.isDMBased() || !me) return [];
    const target = channel.isThread() ? channel.parent : channel;
    const granted = target?.permissionsFor(me);
    if (!granted) return [];
    const bits = new PermissionsBitField(granted);
    return NEEDED.filter(([, flag]) => !bits.has(flag)).map(([name]) => name);
  }
}

/** Discord's longest message content: longer text is clipped at a word, with an ellipsis. */
function fitContent(content: string): string {
  return clipText(content, DISCORD_MAX_MESSAGE);
}

/** How the person who used a command is called here: their server nickname, else their name. */
function personName(interaction: ChatInputCommandInteraction): string {
  const member = interaction.member as GuildMember | { nick?: string | null } | null;
  const name =
    (member && 'displayName' in member ? member.displayName : undefined) ??
    interaction.user.globalName ??
    interaction.user.username;
  return name.slice(0, 100);
}

function label(a: DiscordAvatar): string {
  return a.emoji ? `${a.emoji} ${a.name}` : a.name;
}

/** Whole lines up to `max` characters; when some do not fit, a last line says how many and `where` they are. */
function fitLines(lines: readonly string[], max: number, where: string): string {
  const all = lines.join('\n');
  if (all.length <= max) return all;
  const kept: string[] = [];
  let length = 0;
  for (const [i, line] of lines.entries()) {
    const rest = lines.length - i;
    const tail = `… ${rest} more line${rest === 1 ? '' : 's'}: ${where}`;
    if (length + line.length + 1 + tail.length > max) {
      kept.push(tail);
      break;
    }
    kept.push(line);
    length += line.length + 1;
  }
  return kept.join('\n');
}
