import { formatDuration } from '../config/duration.js';
import type { Logger } from '../logging/logger.js';
import type { Clock } from '../ports/clock.js';
import { takeDailyAllowance } from '../ports/dailyAllowance.js';
import type { ObjectModel } from '../ports/objectModel.js';
import type { ChannelRef } from '../ports/outgoingResponse.js';
import type { DocumentStore } from '../ports/store.js';
import { describe, TroupeError } from '../ports/troupeError.js';
import type { AvatarCast } from './avatarCast.js';
import { type AvatarDefinition, avatarDefinitionSchema } from './avatarDefinition.js';
import { avatarNameSchema, nameKey } from './avatarNames.js';
import {
  type AvatarSketch,
  createdAvatarId,
  modelSketch,
  oneLine,
  type SketchRequest,
  templateSketch,
} from './avatarSketch.js';
import { channelKey } from './channelKey.js';

/** Where created avatars are stored: one document per avatar, keyed by its id. */
export const CREATED_AVATARS = 'avatars';
/** Per person: how many avatars they created today. */
const CREATIONS = 'avatar-creations';
const PAGE = 500;

/** Whether summoning an unknown name creates an avatar, how often a person may, and who writes it. */
export interface AvatarCreationOptions {
  /** Default false: summoning only finds avatars the runtime was given. */
  enabled?: boolean;
  /** Avatars one person may create per UTC day (0: no limit). Default 5. */
  perPersonPerDay?: number;
  /**
   * Writes the new avatar's persona and emoji (structured output). Absent: the offline template,
   * which says it is one. A call that fails falls back to the template too (and is logged).
   */
  model?: ObjectModel;
}

/** Who asks for an avatar, by what name, and where (for the usage record). */
export interface CreateAvatarRequest {
  name: string;
  by: { id: string; name: string };
  channel?: ChannelRef;
  signal?: AbortSignal;
}

/** What {@link AvatarCreator.create} did: made the avatar, or found it (someone made it first). */
export interface CreatedAvatar {
  avatar: AvatarDefinition;
  created: boolean;
}

/** What the creator needs of the runtime. */
export interface AvatarCreatorDeps {
  cast: AvatarCast;
  documents: DocumentStore;
  clock: Clock;
  logger: Logger;
  options: AvatarCreationOptions;
  /** Records the persona model's call against the new avatar (the runtime's usage ledger). */
  meter?: (model: ObjectModel, avatarId: string, scope: string) => ObjectModel;
}

/**
 * Creates avatars when summoning names one nobody has, keeps them in the store (so they survive a
 * restart and every process sharing the store learns them), and forgets them on request. Avatars
 * given to the runtime are never stored here and cannot be forgotten.
 */
export class AvatarCreator {
  /** Loads, creations and forgettings run one at a time: a load must not undo a creation it did not see. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: AvatarCreatorDeps) {}

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work);
    this.queue = result.catch(() => undefined);
    return result;
  }

  get enabled(): boolean {
    return this.deps.options.enabled === true;
  }

  /**
   * Adds the stored avatars the cast does not have yet, and drops the created ones another process
   * forgot. A stored avatar that no longer validates, or clashes with a given one, is skipped with a
   * warning (the given avatar wins).
   */
  load(): Promise<void> {
    return this.serial(() => this.loadNow());
  }

  private async loadNow(): Promise<void> {
    const { cast, documents } = this.deps;
    const stored = new Set<string>();
    let afterKey: string | undefined;
    for (;;) {
      const page = await documents.list(CREATED_AVATARS, { limit: PAGE, ...(afterKey ? { afterKey } : {}) });
      for (const doc of page) {
        stored.add(doc.key);
        if (cast.byId.has(doc.key)) continue;
        this.learn(doc.key, doc.value);
      }
      if (page.length < PAGE) break;
      afterKey = page.at(-1)?.key;
    }
    for (const avatar of cast.list)
      if (!cast.given(avatar.id) && !stored.has(avatar.id)) cast.remove(avatar.id);
  }

  /**
   * Adds a stored avatar. Two processes may have given one emoji to two avatars at once: the later
   * one (in key order) goes without it here. One that still clashes, or no longer validates, is
   * skipped with a warning.
   */
  private learn(id: string, stored: unknown): void {
    const { cast, logger } = this.deps;
    const parsed = avatarDefinitionSchema.safeParse(stored);
    if (!parsed.success) {
      logger.warn(
        { avatarId: id, problem: parsed.error.issues[0]?.message },
        'a stored created avatar was skipped',
      );
      return;
    }
    const { emoji: _emoji, ...withoutEmoji } = parsed.data;
    if (cast.add(parsed.data) || cast.add(withoutEmoji)) return;
    logger.warn({ avatarId: id, problem: cast.conflict(parsed.data) }, 'a stored created avatar was skipped');
  }

  /**
   * The avatar called `request.name`: the one that exists (here or, once the store is read again,
   * in another process), else a new one, written by the model or the template, stored and added.
   *
   * @throws TroupeError `TROUPE_AVATAR_CREATION_OFF`, `TROUPE_AVATAR_NAME_INVALID`,
   *   `TROUPE_AVATAR_NAME_TAKEN` (the name is another avatar's alias or emoji),
   *   `TROUPE_AVATAR_CREATION_LIMIT`, or a store error.
   */
  async create(request: CreateAvatarRequest): Promise<CreatedAvatar> {
    const name = parseName(request.name);
    return this.serial(() => this.createNow(request, name));
  }

  private async createNow(request: CreateAvatarRequest, name: string): Promise<CreatedAvatar> {
    await this.loadNow();
    const existing = this.named(name);
    if (existing) return { avatar: existing, created: false };
    if (!this.enabled)
      throw new TroupeError(
        'TROUPE_AVATAR_CREATION_OFF',
        `No avatar is called "${name}", and creating avatars by summoning is off here (TROUPE_SUMMON_CREATES).`,
      );
    const id = createdAvatarId(name);
    const clash = this.deps.cast.conflict(draft(id, name));
    if (clash !== undefined)
      throw new TroupeError('TROUPE_AVATAR_NAME_TAKEN', `"${name}" cannot be a new avatar: ${clash}.`);
    await this.takeAllowance(request.by);
    const sketch = await this.sketch({ ...request, name }, id);
    const avatar = this.definition(id, sketch, request.by);
    return this.store(avatar);
  }

  /**
   * Forgets a created avatar (by id, name or alias, any case): removed from the store and the
   * cast, which sends it away from every channel. Returns it.
   *
   * @throws TroupeError `TROUPE_AVATAR_UNKNOWN` when no avatar answers to `nameOrId`, and
   *   `TROUPE_AVATAR_NOT_CREATED` when it was given to the runtime (an avatars file).
   */
  forget(nameOrId: string): Promise<AvatarDefinition> {
    return this.serial(() => this.forgetNow(nameOrId));
  }

  private async forgetNow(nameOrId: string): Promise<AvatarDefinition> {
    await this.loadNow();
    const avatar = this.deps.cast.byId.get(nameOrId.trim()) ?? this.named(nameOrId.trim().replace(/^@/u, ''));
    if (!avatar) throw new TroupeError('TROUPE_AVATAR_UNKNOWN', `No avatar is called "${nameOrId}".`);
    if (this.deps.cast.given(avatar.id))
      throw new TroupeError(
        'TROUPE_AVATAR_NOT_CREATED',
        `${avatar.name} comes from the avatars file, not from a summon; remove it from the file instead.`,
      );
    await this.deps.documents.delete(CREATED_AVATARS, avatar.id);
    this.deps.cast.remove(avatar.id);
    this.deps.logger.info({ avatarId: avatar.id }, 'created avatar forgotten');
    return avatar;
  }

  /** The avatar whose name or alias `name` is, or whose id it is (as commands find avatars), any case. */
  private named(name: string): AvatarDefinition | undefined {
    const key = nameKey(name);
    return this.deps.cast.list.find(
      (a) => nameKey(a.id) === key || [a.name, ...(a.aliases ?? [])].some((n) => nameKey(n) === key),
    );
  }

  private async takeAllowance(by: { id: string }): Promise<void> {
    const perDay = this.deps.options.perPersonPerDay ?? 5;
    const allowance = await takeDailyAllowance(this.deps.documents, {
      collection: CREATIONS,
      key: by.id,
      perDay,
      now: this.deps.clock.now(),
      logger: this.deps.logger,
    });
    if (allowance.taken) return;
    throw new TroupeError(
      'TROUPE_AVATAR_CREATION_LIMIT',
      allowance.reason === 'busy'
        ? 'Too many avatars are being created at once; try again in a moment.'
        : `You have created ${perDay} avatar${perDay === 1 ? '' : 's'} today, as many as you may. You can create again after midnight UTC (in ${formatDuration(allowance.resetsInMs)}).`,
      { retryable: true },
    );
  }

  /** The model's sketch, or the template's when there is no model or its call fails. */
  private async sketch(request: CreateAvatarRequest & { name: string }, id: string): Promise<AvatarSketch> {
    const { options, cast, meter, logger } = this.deps;
    const sketchRequest: SketchRequest = {
      name: request.name,
      byName: request.by.name,
      others: cast.list.map((a) => a.name),
      ...(request.signal ? { signal: request.signal } : {}),
    };
    if (!options.model) return templateSketch(sketchRequest);
    const scope = request.channel ? channelKey(request.channel) : 'avatars';
    const model = meter ? meter(options.model, id, scope) : options.model;
    try {
      return await modelSketch(model, sketchRequest);
    } catch (error) {
      logger.warn(
        { err: error, avatarId: id },
        `the model could not write the new avatar; the template is used: ${describe(error)}`,
      );
      return templateSketch(sketchRequest);
    }
  }

  private definition(id: string, sketch: AvatarSketch, by: { id: string; name: string }): AvatarDefinition {
    const base = draft(id, sketch.name);
    const withEmoji = sketch.emoji !== undefined ? { ...base, emoji: sketch.emoji } : base;
    // An emoji another avatar has would make mentions ambiguous: the avatar goes without.
    const emojiClash = sketch.emoji !== undefined && this.deps.cast.conflict(withEmoji) !== undefined;
    return avatarDefinitionSchema.parse({
      ...(emojiClash ? base : withEmoji),
      persona: sketch.persona,
      ...(sketch.topics ? { topics: sketch.topics } : {}),
      created: {
        by: { id: by.id.slice(0, 100), name: oneLine(by.name, 100) },
        at: this.deps.clock.now(),
        persona: sketch.madeBy,
      },
    });
  }

  /** Stores the new avatar unless another process stored it first (then that one is returned). */
  private async store(avatar: AvatarDefinition): Promise<CreatedAvatar> {
    const { documents, cast, clock, logger } = this.deps;
    try {
      await documents.put(CREATED_AVATARS, avatar.id, avatar, { expectedVersion: 0, at: clock.now() });
    } catch (error) {
      if (!TroupeError.isInstance(error) || error.code !== 'TROUPE_STORE_CONFLICT') throw error;
      await this.loadNow();
      const theirs = cast.byId.get(avatar.id);
      if (theirs) return { avatar: theirs, created: false };
      throw error;
    }
    if (!cast.add(avatar)) {
      await documents.delete(CREATED_AVATARS, avatar.id).catch(() => undefined);
      const clash = cast.conflict(avatar) ?? 'it clashes with another avatar';
      throw new TroupeError('TROUPE_AVATAR_NAME_TAKEN', `"${avatar.name}" cannot be a new avatar: ${clash}.`);
    }
    logger.info({ avatarId: avatar.id, persona: avatar.created?.persona }, 'avatar created by summoning');
    return { avatar, created: true };
  }
}

function draft(id: string, name: string): AvatarDefinition {
  return avatarDefinitionSchema.parse({ id, name });
}

function parseName(raw: string): string {
  const parsed = avatarNameSchema.safeParse(raw.trim().replace(/^@/u, ''));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const why =
    issue?.code === 'too_big'
      ? 'is longer than 80 characters'
      : issue?.code === 'too_small'
        ? 'is empty'
        : issue?.message;
  throw new TroupeError(
    'TROUPE_AVATAR_NAME_INVALID',
    `That name ${why ?? 'is not usable'}; an avatar's name is 1 to 80 visible characters.`,
  );
}
