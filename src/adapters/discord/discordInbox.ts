import { createHash } from 'node:crypto';
import {
  type ButtonInteraction,
  type Client,
  type GuildMember,
  type Interaction,
  type InteractionReplyOptions,
  type MessageComponentInteraction,
  MessageFlags,
  type ModalSubmitInteraction,
  PermissionFlagsBits,
  Routes,
} from 'discord.js';
import type { z } from 'zod';
import { responseToolSchemas } from '../../email/responseTools.js';
import { type Logger, silentLogger } from '../../logging/logger.js';
import type { DocumentOperation, TroupeStore } from '../../ports/store.js';
import { describe, TroupeError } from '../../ports/troupeError.js';
import { isInvalidForm } from './discordSendError.js';
import type { DiscordInboxTarget } from './discordSettings.js';
import type { InboxAssistant, InboxEmail, InboxEntry } from './inboxAssistant.js';
import {
  answeredMessage,
  customIdOf,
  describeAnswer,
  type InboxAction,
  MAX_CARRIED_ID,
  parseCustomId,
  pendingMessage,
  reducedAnsweredMessage,
  reducedPendingMessage,
} from './inboxMessage.js';
import { argsFromModal, editFields, modalOf } from './inboxModal.js';

/** One posted interrupt: claimed before it is posted (so it is posted once), then its message. */
interface InboxPost {
  interruptId: string;
  /** `refused`: Discord refused even the reduced message (never tried again; see `refusal`). */
  state: 'posting' | 'posted' | 'closed' | 'refused';
  claimedAt: number;
  channelId?: string;
  messageId?: string;
  /** Who answered it on Discord (a user id), when someone did. */
  by?: string;
  /** Discord's refusal of the message (code and message), when it refused it. */
  refusal?: { code: number; message: string };
}

/**
 * Every post, open or not, read by key only. Closed posts are kept (until forgotten) so a poll
 * whose `pending()` was read before an answer does not post the interrupt again, and so a late
 * press can say who answered.
 */
const POSTS = 'discord-inbox';
/** The keys of posts in state `posted` (their buttons live): all a poll lists. */
const OPEN = 'discord-inbox-open';
/** How many posts the start's indexing of the old layout reads at a time. */
const PAGE = 500;
const REFS = 'discord-inbox-refs';
// The command handler's scope: an interaction id is answered once, whichever part handles it.
const INTERACTIONS = 'discord-interactions';
/** A claim this old without a message is taken to be a process that stopped before it posted. */
const STALE_CLAIM_MS = 60_000;
/** Posts not written for this long are forgotten (the interrupt long answered). */
const FORGET_AFTER_MS = 30 * 86_400_000;
/** How often idle posts are forgotten: at start, then daily (a bot runs for months). */
const FORGET_EVERY_MS = 86_400_000;
const fold = (s: string) => s.normalize('NFKC').toLocaleLowerCase('en');

/** How a {@link DiscordInbox} is made. */
export interface DiscordInboxOptions {
  client: Client;
  assistant: InboxAssistant;
  store: Pick<TroupeStore, 'documents' | 'processed'>;
  target: DiscordInboxTarget;
  /** Who may answer in a channel: role ids or names; empty: people with Manage Server. */
  roles?: readonly string[];
  /** How often the inbox is read for new and answered interrupts (default 5 s). */
  pollMs?: number;
  /** Epoch ms (default `Date.now`). */
  now?: () => number;
  logger?: Logger;
}

/**
 * The email assistant's inbox on Discord (issue 13, human in the loop): every pending interrupt is
 * posted once to a channel or a person's DMs with a button for each answer it allows; Edit opens a
 * modal built from the tool's schema and Respond one for feedback. An answer is the same Agent
 * Inbox response `troupe inbox answer` gives, through the same `answer()`, so it is validated and
 * stored before anything acts on it. Interrupts come from the store (read at start and every few
 * seconds), so those raised by `troupe email` in another process appear too; a message whose
 * interrupt was answered elsewhere loses its buttons and says how it was answered.
 */
export class DiscordInbox {
  private readonly log: Logger;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private again = false;
  private dmChannel: string | undefined;
  private indexed = false;
  private forgotAt: number | undefined;
  private readonly failures = new Set<string>();
  private readonly work = new Set<Promise<unknown>>();

  constructor(private readonly options: DiscordInboxOptions) {
    this.log = options.logger ?? silentLogger();
    this.now = options.now ?? Date.now;
  }

  /** Reads the inbox now and then every `pollMs`. */
  start(): void {
    if (this.timer) return;
    const tick = () => {
      this.forgetIdle();
      this.track(this.poll());
    };
    tick();
    this.timer = setInterval(tick, this.options.pollMs ?? 5_000);
    this.timer.unref();
  }

  /** Stops reading the inbox (answers in progress go on; {@link whenIdle} waits for them). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Resolves when no poll or answer is in progress. */
  async whenIdle(): Promise<void> {
    while (this.work.size > 0) await Promise.allSettled([...this.work]);
  }

  /** Whether an interaction is one of the inbox's buttons or modals. */
  static owns(interaction: Interaction): boolean {
    return (
      (interaction.isButton() || interaction.isModalSubmit()) &&
      parseCustomId(interaction.customId) !== undefined
    );
  }

  /**
   * Posts what is pending and not posted yet, and updates the messages of interrupts answered
   * elsewhere. Never throws (a failure is logged, and the next poll tries again). Polls do not
   * overlap: one asked for while another runs runs after it.
   */
  async poll(): Promise<void> {
    if (this.polling) {
      this.again = true;
      return this.polling;
    }
    this.polling = (async () => {
      do {
        this.again = false;
        try {
          await this.pollOnce();
        } catch (error) {
          this.warnOnce('poll', error, 'could not read the email inbox; trying again at the next poll');
        }
      } while (this.again);
    })().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  private async pollOnce(): Promise<void> {
    const { assistant, store } = this.options;
    if (!this.indexed) {
      await this.indexOpenPosts();
      this.indexed = true;
    }
    const pending = await assistant.pending();
    const waiting = new Set(pending.map((i) => i.id));
    for (const item of pending) await this.post(item);
    // Only the open posts: closed ones are never listed, however many there are.
    for (const open of await store.documents.list(OPEN)) {
      if (waiting.has(open.key)) continue;
      const post = await store.documents.get<InboxPost>(POSTS, open.key);
      if (post?.value.state !== 'posted') {
        // Closed by a process that did not index it, or forgotten: not open any more.
        await store.documents.delete(OPEN, open.key, { expectedVersion: open.version });
        continue;
      }
      const item = await assistant.interrupt(open.key);
      if (item?.status !== 'answered') continue;
      await this.close(item, undefined, post.version);
    }
  }

  /**
   * Indexes the open posts of the layout before `OPEN` (one collection, listed whole), and
   * any an older process wrote since: read once per process (at its first poll), a page at a time.
   */
  private async indexOpenPosts(): Promise<void> {
    const { documents } = this.options.store;
    let afterKey: string | undefined;
    for (;;) {
      const page = await documents.list<InboxPost>(POSTS, {
        limit: PAGE,
        ...(afterKey !== undefined ? { afterKey } : {}),
      });
      for (const post of page) {
        if (post.value.state !== 'posted') continue;
        await documents.put(OPEN, post.key, openOf(post.key), { expectedVersion: 0 }).catch(unlessConflict);
      }
      if (page.length < PAGE) return;
      afterKey = page.at(-1)?.key;
      // SQLite reads synchronously: let the event loop run between pages of a large collection.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** Forgets idle posts at start, then at most daily. */
  private forgetIdle(): void {
    const now = this.now();
    if (this.forgotAt !== undefined && now - this.forgotAt < FORGET_EVERY_MS) return;
    this.forgotAt = now;
    void documentsForget(this.options.store, now - FORGET_AFTER_MS).catch(() => undefined);
  }

  /** Claims the interrupt, posts it, records the message; nothing if it was posted (or is being). */
  private async post(item: InboxEntry): Promise<void> {
    const { documents } = this.options.store;
    const existing = await documents.get<InboxPost>(POSTS, item.id);
    if (
      existing &&
      (existing.value.state !== 'posting' || this.now() - existing.value.claimedAt < STALE_CLAIM_MS)
    )
      return;
    const claim: InboxPost = { interruptId: item.id, state: 'posting', claimedAt: this.now() };
    let version: number;
    try {
      version = await documents.put(POSTS, item.id, claim, { expectedVersion: existing?.version ?? 0 });
    } catch (error) {
      unlessConflict(error); // another process has it
      return;
    }
    try {
      const channelId = await this.channelId();
      const ref = await this.refOf(item.id);
      const sent = await this.sendOrReduce(
        item.id,
        (body) =>
          this.options.client.rest.post(Routes.channelMessages(channelId), {
            body: {
              ...body,
              allowed_mentions: { parse: [] },
              // A claim taken over after a crash posts with the same nonce, so Discord does not post twice.
              nonce: nonceOf(item.id),
              enforce_nonce: true,
            },
          }) as Promise<{ id: string }>,
        pendingMessage(item, ref),
        reducedPendingMessage(item, ref),
      );
      if (!sent.ok) {
        // Recorded, so no poll posts it again: the same text gets the same refusal.
        await documents.put(
          POSTS,
          item.id,
          { ...claim, state: 'refused', channelId, refusal: sent.refusal },
          { expectedVersion: version },
        );
        return;
      }
      const message = sent.value;
      // Indexed with the same write, so a poll finds it among the open posts.
      await documents.batch([
        { op: 'put', collection: OPEN, key: item.id, value: openOf(item.id) },
        {
          op: 'put',
          collection: POSTS,
          key: item.id,
          value: { ...claim, state: 'posted', channelId, messageId: message.id },
          expectedVersion: version,
        },
      ]);
      this.log.info(
        { interruptId: item.id, channelId, messageId: message.id },
        'interrupt posted to Discord',
      );
    } catch (error) {
      // Let the next poll try again (the nonce keeps a retried post single).
      await documents.delete(POSTS, item.id, { expectedVersion: version }).catch(() => undefined);
      this.warnOnce(`post:${describe(error).slice(0, 80)}`, error, 'could not post an interrupt to Discord');
    }
  }

  /**
   * Sends an interrupt's message (a post or an edit). When Discord refuses it for good (50035
   * Invalid Form Body: its text broke one of Discord's limits), the refusal is logged with its
   * code and the reduced form sent instead; when that is refused too, the refusal is returned
   * (never retried: the same text gets the same answer). Other failures throw.
   */
  private async sendOrReduce<T>(
    interruptId: string,
    send: (body: InboxBody) => Promise<T>,
    full: InboxBody,
    reduced: InboxBody,
  ): Promise<{ ok: true; value: T } | { ok: false; refusal: { code: number; message: string } }> {
    try {
      return { ok: true, value: await send(full) };
    } catch (error) {
      if (!isInvalidForm(error)) throw error;
      this.log.error(
        { interruptId, discordCode: error.code, err: error },
        'Discord refused the message of an interrupt (Invalid Form Body); sending it in a reduced form',
      );
    }
    try {
      return { ok: true, value: await send(reduced) };
    } catch (error) {
      if (!isInvalidForm(error)) throw error;
      this.log.error(
        { interruptId, discordCode: error.code, err: error },
        `Discord refused even the reduced message of an interrupt; it is not sent again (read it with troupe inbox show ${interruptId})`,
      );
      return { ok: false, refusal: { code: Number(error.code), message: error.message } };
    }
  }

  /** Marks the post answered and shows how on its message (buttons removed). */
  private async close(item: InboxEntry, record: InboxEmail | undefined, expected?: number): Promise<void> {
    const { documents } = this.options.store;
    const stored = await documents.get<InboxPost>(POSTS, item.id);
    if (!stored?.value.messageId || !stored.value.channelId) return;
    if (expected !== undefined && stored.version !== expected) return;
    const email = record ?? (await this.options.assistant.record(item.emailId));
    const how = describeAnswer(item, email, stored.value.by);
    const route = Routes.channelMessage(stored.value.channelId, stored.value.messageId);
    // Refused even reduced: closed all the same, so no poll edits it again (the refusal is logged).
    await this.sendOrReduce(
      item.id,
      (body) => this.options.client.rest.patch(route, { body }),
      answeredMessage(item, how),
      reducedAnsweredMessage(item, how),
    );
    if (stored.value.state !== 'closed')
      await documents
        .batch(closing(item.id, { ...stored.value, state: 'closed' }, stored.version))
        .catch(() => undefined);
  }

  /**
   * Answers one of the inbox's button presses or modal submits; never throws (a failure is told to
   * the person and logged). An interaction delivered twice is answered once.
   */
  async handle(interaction: Interaction): Promise<void> {
    if (!interaction.isButton() && !interaction.isModalSubmit()) return;
    const parsed = parseCustomId(interaction.customId);
    if (!parsed) return;
    const work = this.answerInteraction(interaction, parsed.action, parsed.ref);
    this.track(work);
    await work;
  }

  private async answerInteraction(
    interaction: ButtonInteraction | ModalSubmitInteraction,
    action: InboxAction,
    ref: string,
  ): Promise<void> {
    try {
      const first = await this.options.store.processed.markProcessed(
        INTERACTIONS,
        interaction.id,
        this.now(),
      );
      if (!first) {
        this.log.debug({ interactionId: interaction.id }, 'interaction already handled; ignored');
        return;
      }
      const refusal = this.refusal(interaction);
      if (refusal) {
        await this.tell(interaction, refusal);
        return;
      }
      const id = await this.idOf(ref);
      const item = id ? await this.options.assistant.interrupt(id) : undefined;
      if (!item) {
        await this.tell(interaction, 'This interrupt is no longer in the inbox.');
        return;
      }
      if (item.status === 'answered') {
        await this.alreadyAnswered(interaction, item);
        return;
      }
      if (interaction.isButton()) await this.pressed(interaction, action, item);
      else await this.submitted(interaction, action, item);
    } catch (error) {
      this.log.warn({ err: error, interactionId: interaction.id }, 'inbox interaction failed');
      await this.tell(interaction, 'Something went wrong answering that; it has been logged.').catch(
        () => undefined,
      );
    }
  }

  private async pressed(
    interaction: ButtonInteraction,
    action: InboxAction,
    item: InboxEntry,
  ): Promise<void> {
    if (action === 'respond') {
      const question = item.request.action_request.action === 'Question';
      await interaction.showModal(
        modalOf(
          customIdOf('respond', await this.refOf(item.id)),
          question ? 'Your answer' : 'Your feedback',
          [
            {
              name: 'feedback',
              kind: 'text',
              label: question ? 'Answer' : 'Feedback',
              description: 'The assistant goes on with this.',
              paragraph: true,
              required: true,
              maxLength: 4_000,
              value: '',
            },
          ],
        ) as Parameters<ButtonInteraction['showModal']>[0],
      );
      return;
    }
    if (action === 'edit') {
      const schema = this.schemaOf(item);
      if (!schema || !item.request.config.allow_edit) {
        await this.tell(interaction, `${item.request.action_request.action} cannot be edited.`);
        return;
      }
      const fields = editFields(schema, item.request.action_request.args);
      await interaction.showModal(
        modalOf(
          customIdOf('edit', await this.refOf(item.id)),
          `Edit ${item.request.action_request.action.replace(/_tool$/u, '').replace(/_/gu, ' ')}`,
          fields,
        ) as Parameters<ButtonInteraction['showModal']>[0],
      );
      return;
    }
    await interaction.deferUpdate();
    await this.give(interaction, item, { type: action });
  }

  private async submitted(
    interaction: ModalSubmitInteraction,
    action: InboxAction,
    item: InboxEntry,
  ): Promise<void> {
    if (action === 'respond') {
      const feedback = interaction.fields.getTextInputValue('feedback');
      if (feedback.trim() === '') {
        await this.tell(interaction, 'The feedback is empty; nothing was changed.');
        return;
      }
      await this.deferUpdate(interaction);
      await this.give(interaction, item, { type: 'response', args: feedback });
      return;
    }
    if (action !== 'edit') return;
    const schema = this.schemaOf(item);
    if (!schema) {
      await this.tell(interaction, `${item.request.action_request.action} cannot be edited.`);
      return;
    }
    const values = new Map<string, string>();
    for (const field of editFields(schema, item.request.action_request.args)) {
      const value = interaction.fields.fields.get(field.name);
      if (value && 'value' in value && typeof value.value === 'string') values.set(field.name, value.value);
    }
    const edited = argsFromModal(schema, item.request.action_request.args, values);
    if (!edited.ok) {
      // Nothing is stored: the interrupt stays pending and Edit opens the modal again.
      await this.tell(
        interaction,
        `The edit does not fit ${item.request.action_request.action}, so nothing was changed:\n${edited.problems.map((p) => `• ${p}`).join('\n')}\nPress Edit to try again.`,
      );
      return;
    }
    await this.deferUpdate(interaction);
    await this.give(interaction, item, {
      type: 'edit',
      args: { action: item.request.action_request.action, args: edited.args },
    });
  }

  /** Gives the answer to the assistant and shows on the message what it did. */
  private async give(
    interaction: MessageComponentInteraction | ModalSubmitInteraction,
    item: InboxEntry,
    answer: { type: string; args?: unknown },
  ): Promise<void> {
    let result: { item: InboxEntry; record: InboxEmail };
    try {
      result = await this.options.assistant.answer(item.id, answer);
    } catch (error) {
      if (!TroupeError.isInstance(error) || error.code !== 'TROUPE_INBOX_INVALID') throw error;
      const now = await this.options.assistant.interrupt(item.id);
      if (now?.status === 'answered') await this.alreadyAnswered(interaction, now);
      else await this.tell(interaction, error.message);
      return;
    }
    const { documents } = this.options.store;
    const stored = await documents.get<InboxPost>(POSTS, item.id);
    const post: InboxPost = stored?.value ?? { interruptId: item.id, state: 'posted', claimedAt: this.now() };
    await documents
      .batch(closing(item.id, { ...post, state: 'closed', by: interaction.user.id }))
      .catch((error: unknown) => this.log.warn({ err: error }, 'could not record the answer on its post'));
    const how = describeAnswer(result.item, result.record, interaction.user.id);
    await this.sendOrReduce(
      item.id,
      (body) => interaction.editReply(body),
      answeredMessage(result.item, how),
      reducedAnsweredMessage(result.item, how),
    );
    this.log.info(
      { interruptId: item.id, answer: answer.type, by: interaction.user.id },
      'interrupt answered on Discord',
    );
    // Feedback may raise the next interrupt at once (a new draft): post it now, not at the next poll.
    this.track(this.poll());
  }

  /** Tells the person how the interrupt was answered, and brings its message up to date. */
  private async alreadyAnswered(
    interaction: MessageComponentInteraction | ModalSubmitInteraction,
    item: InboxEntry,
  ): Promise<void> {
    const post = (await this.options.store.documents.get<InboxPost>(POSTS, item.id))?.value;
    const record = await this.options.assistant.record(item.emailId);
    const how = describeAnswer(item, record, post?.by);
    await this.tell(interaction, `Already answered: ${how}`);
    await this.close(item, record).catch((error: unknown) =>
      this.log.warn(
        { err: error, interruptId: item.id },
        'could not update the message of an answered interrupt',
      ),
    );
  }

  /** Why this person may not answer here, if they may not. */
  private refusal(interaction: MessageComponentInteraction | ModalSubmitInteraction): string | undefined {
    const { target } = this.options;
    if (target.kind === 'dm')
      return interaction.user.id === target.userId ? undefined : 'Only the inbox’s owner answers it.';
    const allowed = this.options.roles ?? [];
    if (allowed.length === 0)
      return interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild)
        ? undefined
        : 'Answering the email inbox needs Manage Server.';
    const member = interaction.member;
    const roleIds: string[] = Array.isArray(member?.roles)
      ? (member.roles as string[])
      : [...((member as GuildMember | null)?.roles.cache.keys() ?? [])];
    const names = roleIds
      .map((id) => interaction.guild?.roles.cache.get(id)?.name)
      .filter((n) => n !== undefined);
    const wanted = allowed.map(fold);
    if (
      roleIds.some((id) => wanted.includes(fold(id))) ||
      names.some((n) => wanted.includes(fold(n as string)))
    )
      return undefined;
    const shown = allowed.map((r) => (/^\d+$/u.test(r) ? `<@&${r}>` : `@${r}`)).join(', ');
    return `Answering the email inbox needs one of these roles: ${shown}.`;
  }

  private schemaOf(item: InboxEntry): z.ZodObject | undefined {
    const action = item.request.action_request.action;
    return Object.hasOwn(responseToolSchemas, action)
      ? (responseToolSchemas[action as keyof typeof responseToolSchemas] as z.ZodObject)
      : undefined;
  }

  /** The channel interrupts go to (a DM channel is opened once). */
  private async channelId(): Promise<string> {
    const { target } = this.options;
    if (target.kind === 'channel') return target.channelId;
    if (!this.dmChannel) {
      const channel = (await this.options.client.rest.post(Routes.userChannels(), {
        body: { recipient_id: target.userId },
      })) as { id: string };
      this.dmChannel = channel.id;
    }
    return this.dmChannel;
  }

  /** What a custom id carries for an interrupt: its id, or a stored reference when it is too long. */
  private async refOf(id: string): Promise<string> {
    if (id.length <= MAX_CARRIED_ID && !id.startsWith('~')) return id;
    const ref = `~${createHash('sha256').update(id).digest('base64url').slice(0, 32)}`;
    await this.options.store.documents.put(REFS, ref, { id });
    return ref;
  }

  private async idOf(ref: string): Promise<string | undefined> {
    if (!ref.startsWith('~')) return ref;
    return (await this.options.store.documents.get<{ id: string }>(REFS, ref))?.value.id;
  }

  /** An ephemeral answer, whether or not the interaction was acknowledged already. */
  private async tell(
    interaction: MessageComponentInteraction | ModalSubmitInteraction,
    content: string,
  ): Promise<void> {
    const body: InteractionReplyOptions = {
      content: content.slice(0, 2000),
      flags: MessageFlags.Ephemeral,
      allowedMentions: { parse: [] },
    };
    if (interaction.deferred || interaction.replied) await interaction.followUp(body);
    else await interaction.reply(body);
  }

  private async deferUpdate(interaction: ModalSubmitInteraction): Promise<void> {
    // A modal opened from a message's button can update that message; any other only reply.
    if (interaction.isFromMessage()) await interaction.deferUpdate();
    else await interaction.deferReply({ flags: MessageFlags.Ephemeral });
  }

  private track(work: Promise<unknown>): void {
    this.work.add(work);
    void work.finally(() => this.work.delete(work)).catch(() => undefined);
  }

  private warnOnce(key: string, error: unknown, message: string): void {
    if (this.failures.has(key)) {
      this.log.debug({ err: error }, message);
      return;
    }
    this.failures.add(key);
    this.log.warn({ err: error }, message);
  }
}

/** An interrupt's message as the inbox sends it (pending or answered). */
type InboxBody = ReturnType<typeof pendingMessage> | ReturnType<typeof answeredMessage>;

/** A nonce per interrupt (Discord allows 25 characters). */
function nonceOf(id: string): string {
  return createHash('sha256').update(`inbox:${id}`).digest('hex').slice(0, 25);
}

/** What `OPEN` holds for a post (its key says which). */
function openOf(interruptId: string): { interruptId: string } {
  return { interruptId };
}

/** Records a post closed and takes it out of the open ones, in one write. */
function closing(interruptId: string, post: InboxPost, expectedVersion?: number): DocumentOperation[] {
  return [
    { op: 'put', collection: POSTS, key: interruptId, value: post, expectedVersion },
    { op: 'delete', collection: OPEN, key: interruptId },
  ];
}

/** Swallows a lost compare-and-set (someone else wrote first); throws anything else. */
function unlessConflict(error: unknown): void {
  if (TroupeError.isInstance(error) && error.code === 'TROUPE_STORE_CONFLICT') return;
  throw error;
}

async function documentsForget(store: Pick<TroupeStore, 'documents'>, before: number): Promise<void> {
  await store.documents.expireIdle(POSTS, before);
  await store.documents.expireIdle(OPEN, before);
  await store.documents.expireIdle(REFS, before);
}
