import { z } from 'zod';
import { buildTurnPrompt } from '../delivery/prompts.js';
import type { AvatarProfile, TurnClaim } from '../floor/floorTypes.js';
import { DEFAULT_HISTORY_WINDOW, type HistoryEntry, type HistoryStore } from '../ports/history.js';
import type {
  TurnBrief,
  TurnGenerationRequest,
  TurnGenerationResult,
  TurnModel,
  TurnSituation,
} from '../ports/model.js';
import { type RelationshipTracker, relationshipNote } from './relationshipTracker.js';
import type { LookupDesk } from './tools/lookupDesk.js';
import { turnBrief } from './turnBrief.js';
import type { UnfoldedHistory } from './unfoldedHistory.js';
import type { WitnessLog } from './witnessLog.js';
import type { WorkUnit } from './workTracker.js';

/** What the turn executor needs. */
export interface TurnExecutorOptions {
  /** The model of every avatar without one of its own. */
  model: TurnModel;
  /** Avatars' own models (`model:` in their definitions), by avatar id. */
  avatarModels?: ReadonlyMap<string, TurnModel>;
  history: HistoryStore;
  /** How many recent channel messages a prompt carries (default {@link DEFAULT_HISTORY_WINDOW}). */
  historyLimit?: number;
  /** Avatar-to-avatar history, for prompts and to record exchanges. */
  relationships?: RelationshipTracker;
  /** Every avatar by id (names for relationship notes). */
  avatars?: ReadonlyMap<string, AvatarProfile>;
  /** The lookup tool, its composer and pending choices; used for avatars in `toolUsers`. */
  lookupDesk?: LookupDesk;
  /** Ids of avatars allowed to use the lookup tool. */
  toolUsers?: ReadonlySet<string>;
  /** When avatars were present: prompts then hold only what the avatar witnessed. */
  witness?: WitnessLog;
  /**
   * Where lines go instead of `history` while they ride the channels' ledgers (a durable store
   * that keeps writes in order): a ledger fold writes them. Prompts read `history`, then these.
   */
  unfolded?: UnfoldedHistory | undefined;
}

/** What {@link TurnExecutor.generate} is asked. */
export interface GenerationInput {
  channelKey: string;
  avatar: AvatarProfile;
  turn: TurnClaim;
  situation: TurnSituation;
  /** May be a getter: it is handed on as one, so a signal nobody reads is never made. */
  signal?: AbortSignal;
  /** The turn as the runtime counts it: generation marks what it waits for (lookup, store, model). */
  unit?: WorkUnit;
  /** Set by generation: how many channel messages the prompt showed the avatar. */
  seen?: number | undefined;
}

/**
 * The request of a model that does not read the prompt (the offline scripted model): it writes a
 * turn in microseconds, less than an `AbortSignal` takes to make, so the caller's signal is made
 * only if the model reads `signal` (a getter). Models that read prompts get a plain object.
 */
class UnreadPromptRequest implements TurnGenerationRequest {
  readonly channelKey: string;
  readonly avatar: AvatarProfile;
  readonly turn: TurnBrief;
  readonly prompt = { system: '', messages: [] };
  readonly situation: TurnSituation;
  /** Private to the runtime: it holds the floor's claim, which models never see. */
  readonly #input: GenerationInput;

  constructor(input: GenerationInput) {
    this.channelKey = input.channelKey;
    this.avatar = input.avatar;
    this.turn = turnBrief(input.turn);
    this.situation = input.situation;
    this.#input = input;
  }

  get signal(): AbortSignal | undefined {
    return this.#input.signal;
  }
}

const lookupInputSchema = z.object({
  entity_type: z.enum(['vendor', 'customer', 'part', 'purchase_order']).describe('What to look up.'),
  entity_name: z.string().optional().describe('The name as the person wrote it (vendors, customers, parts).'),
  order_number: z.string().optional().describe('A purchase order number such as PO-1001.'),
});

/**
 * The domain executor of a channel's conversation: it writes turns with the model and owns the
 * channel's history (docs/architecture.md, invariant 3). People's messages are written when they arrive, an
 * avatar's reply once it was delivered; error messages and the feedback guarantee's fallback are
 * never written, because nobody said them.
 */
export class TurnExecutor {
  private readonly historyLimit: number;
  /** The last map of avatar ids by name (see {@link idsByName}) and the cast it was built from. */
  private byName:
    | { avatars: ReadonlyMap<string, AvatarProfile>; size: number; ids: Map<string, string> }
    | undefined;

  constructor(private readonly options: TurnExecutorOptions) {
    this.historyLimit = options.historyLimit ?? DEFAULT_HISTORY_WINDOW;
  }

  /** The model of avatars without one of their own. */
  get model(): TurnModel {
    return this.options.model;
  }

  /** The model an avatar's turns are written with: its own, else the default. */
  modelFor(avatarId: string): TurnModel {
    return this.options.avatarModels?.get(avatarId) ?? this.options.model;
  }

  /** Writes one turn: the prompt carries persona, recent history, the thread and who is present. */
  generate(input: GenerationInput): Promise<TurnGenerationResult> {
    const desk = this.options.lookupDesk;
    const usesTools = desk !== undefined && (this.options.toolUsers?.has(input.avatar.id) ?? false);
    const model = this.modelFor(input.avatar.id);
    if (!usesTools && model.readsPrompt === false) {
      // A model that never reads the prompt is not worth the history read and prompt building.
      return model.generateTurn(new UnreadPromptRequest(input));
    }
    return this.generateWithPrompt(input, model, usesTools ? desk : undefined);
  }

  private async generateWithPrompt(
    input: GenerationInput,
    model: TurnModel,
    desk: LookupDesk | undefined,
  ): Promise<TurnGenerationResult> {
    const usesTools = desk !== undefined;
    const unit = input.unit;
    if (desk && usesTools) {
      unit?.waitOn('lookup');
      // A pick of a pending choice, or (for a model that cannot call tools) a plain lookup request.
      const reply = await desk.answer({
        channelKey: input.channelKey,
        turn: input.turn,
        recognise: model.readsPrompt === false,
        names: [input.avatar.name, ...(input.avatar.aliases ?? [])],
      });
      if (reply) return { text: reply.text, mentions: [], model: `tool:entity_lookup+${model.id}` };
    }
    if (model.readsPrompt === false) {
      unit?.waitOn('model');
      // A model that never reads the prompt is not worth the history read and prompt building.
      return model.generateTurn(new UnreadPromptRequest(input));
    }
    unit?.waitOn('store');
    const recent = await this.recent(input.channelKey);
    const witness = this.options.witness;
    const history = witness ? await witness.witnessed(input.channelKey, input.avatar.id, recent) : recent;
    input.seen = history.length;
    const note = await this.relationshipNote(input.avatar, input.turn).catch(() => undefined);
    const prompt = buildTurnPrompt({
      avatar: input.avatar,
      turn: input.turn,
      history,
      presentNames: input.turn.context.presentNames,
      historyLimit: this.historyLimit,
      ...(note ? { notes: [note] } : {}),
    });
    // The model may call the lookup tool; what the person reads is the composed reply.
    let composed: string | undefined;
    const tools =
      desk && usesTools
        ? {
            entity_lookup: {
              description:
                'Look up a vendor, customer, part or purchase order in the business database. Returns the answer to show the person.',
              inputSchema: lookupInputSchema,
              execute: async (query: z.infer<typeof lookupInputSchema>) => {
                unit?.waitOn('lookup');
                const reply = await desk.lookupFor({ channelKey: input.channelKey, turn: input.turn, query });
                unit?.waitOn('model');
                composed = reply.text;
                return reply.text;
              },
            },
          }
        : undefined;
    unit?.waitOn('model');
    try {
      const result = await model.generateTurn({
        channelKey: input.channelKey,
        avatar: input.avatar,
        turn: turnBrief(input.turn),
        prompt,
        situation: input.situation,
        ...(tools ? { tools } : {}),
        ...(input.signal ? { signal: input.signal } : {}),
      });
      return composed !== undefined ? { ...result, text: composed, mentions: [] } : result;
    } catch (error) {
      if (composed !== undefined) return { text: composed, mentions: [], model: model.id };
      throw error;
    }
  }

  /** The channel's last `historyLimit` lines: those stored, then those its ledger still holds. */
  private async recent(channelKey: string): Promise<HistoryEntry[]> {
    const limit = this.historyLimit;
    const unfolded = this.options.unfolded?.linesOf(channelKey) ?? [];
    if (unfolded.length >= limit) return unfolded.slice(unfolded.length - limit);
    const stored = await this.options.history.recent(channelKey, limit - unfolded.length);
    return unfolded.length === 0 ? stored : [...stored, ...unfolded];
  }

  /** The avatar's history with the avatars this turn involves: who addressed it, thread partners, who is present. */
  private async relationshipNote(avatar: AvatarProfile, turn: TurnClaim): Promise<string | undefined> {
    const { relationships, avatars } = this.options;
    if (!relationships || !avatars) return undefined;
    const names = [...turn.context.threadPartnerNames, ...turn.context.presentNames];
    const byName = this.idsByName(avatars, names);
    const partners = new Set<string>();
    const by = turn.context.addressedById;
    if (by !== undefined && avatars.has(by)) partners.add(by);
    for (const name of names) {
      const id = byName.get(name);
      if (id !== undefined) partners.add(id);
    }
    partners.delete(avatar.id);
    if (partners.size === 0) return undefined;
    const known = await relationships.about(avatar.id, [...partners]);
    return relationshipNote(known, (id) => avatars.get(id)?.name ?? id, turn.claimedAt);
  }

  /**
   * Avatar ids by display name, for `names`. The cast's map changes in place (avatars added and
   * removed), so the map built last is reused only while the cast's size is unchanged and the cast
   * still gives each of `names` to the avatar the map says; otherwise (a miss too: that avatar may
   * be new) it is rebuilt, which costs a pass over the whole cast. Names are unique in a cast (any
   * case; see `ambiguousNames`), so a confirmed name has no other owner.
   */
  private idsByName(
    avatars: ReadonlyMap<string, AvatarProfile>,
    names: readonly string[],
  ): Map<string, string> {
    const cached = this.byName;
    if (cached?.avatars === avatars && cached.size === avatars.size) {
      const confirmed = (name: string) => {
        const id = cached.ids.get(name);
        return id !== undefined && avatars.get(id)?.name === name;
      };
      if (names.every(confirmed)) return cached.ids;
    }
    const ids = new Map([...avatars.values()].map((a) => [a.name, a.id]));
    this.byName = { avatars, size: avatars.size, ids };
    return ids;
  }

  /** Records that an avatar's delivered turn answered another avatar. */
  recordExchange(input: {
    speakerId: string;
    addresseeId: string;
    channelKey: string;
    text: string;
    at: number;
  }): Promise<void> | undefined {
    const { relationships, avatars } = this.options;
    if (!relationships || !avatars?.has(input.addresseeId)) return undefined;
    return relationships.record(input);
  }

  /**
   * Records a message someone wrote in the channel. Undefined when the history took it at once;
   * otherwise the write in flight.
   */
  recordInbound(entry: HistoryEntry): Promise<void> | undefined {
    return this.append(entry);
  }

  /** Records an avatar's reply that the transport delivered (undefined when written at once). */
  recordDelivered(entry: HistoryEntry): Promise<void> | undefined {
    return this.append(entry);
  }

  /** Records that an avatar arrived in a channel (it witnesses what is said from now on). */
  recordArrival(channelKey: string, avatarId: string, at: number): Promise<void> | undefined {
    return this.options.witness?.arrive(channelKey, avatarId, at);
  }

  /** Records that an avatar left a channel (it witnesses nothing more there until it returns). */
  recordDeparture(channelKey: string, avatarId: string, at: number): Promise<void> | undefined {
    return this.options.witness?.leave(channelKey, avatarId, at);
  }

  /** Tells the presence record who is present as a channel starts (fresh or restored). */
  recordPresenceAtStart(channelKey: string, presentIds: readonly string[], at: number): void {
    this.options.witness?.reconcile(channelKey, presentIds, at);
  }

  private append(entry: HistoryEntry): Promise<void> | undefined {
    const { history } = this.options;
    this.options.witness?.noteMessage(entry.channelId, entry.messageId, entry.at);
    const { unfolded } = this.options;
    if (unfolded) {
      unfolded.note(entry);
      return undefined;
    }
    if (!history.appendNow) return history.append(entry);
    try {
      history.appendNow(entry);
      return undefined;
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
