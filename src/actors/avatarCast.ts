import { Subject } from 'rxjs';
import type { AvatarProfile } from '../floor/floorTypes.js';
import { type AvatarDefinition, toProfile } from './avatarDefinition.js';
import { ambiguousNames } from './avatarNames.js';

/** A change to the cast: an avatar created (or learned from the store), or one forgotten. */
export type AvatarChange =
  | { type: 'avatar.added'; avatar: AvatarDefinition }
  | { type: 'avatar.removed'; avatar: AvatarDefinition };

/**
 * The avatars a runtime knows, as they are now: those it was given, and those created by summoning
 * while it runs (or by another process on the same store). Channels, the turn executor and the
 * front door read it; every change is announced on `changes$` so live floors can take the new
 * roster. The lookup maps are updated in place (readers keep a reference); the lists are replaced,
 * so a floor built from one roster array keeps sharing it until the cast changes.
 */
export class AvatarCast {
  /** Every avatar, in the order given, then created. Replaced on every change. */
  private avatarList: readonly AvatarDefinition[];
  /** The floors' view of `list`. Replaced on every change. */
  private profiles: AvatarProfile[];
  readonly byId = new Map<string, AvatarDefinition>();
  readonly profilesById = new Map<string, AvatarProfile>();
  readonly changes$ = new Subject<AvatarChange>();
  /** Ids of the avatars the runtime was given: never removed, whatever they say of themselves. */
  private readonly givenIds: ReadonlySet<string>;

  constructor(avatars: readonly AvatarDefinition[]) {
    this.givenIds = new Set(avatars.map((a) => a.id));
    this.avatarList = [...avatars];
    this.profiles = avatars.map(toProfile);
    for (const a of avatars) this.byId.set(a.id, a);
    for (const p of this.profiles) this.profilesById.set(p.id, p);
  }

  /** Whether the runtime was given this avatar (an avatars file), rather than summoning creating it. */
  given(id: string): boolean {
    return this.givenIds.has(id);
  }

  get list(): readonly AvatarDefinition[] {
    return this.avatarList;
  }

  get roster(): readonly AvatarProfile[] {
    return this.profiles;
  }

  /**
   * Why `avatar` cannot join the cast (its id is taken, or a name, alias or emoji of it is another
   * avatar's, any case), or undefined when it can.
   */
  conflict(avatar: AvatarDefinition): string | undefined {
    if (this.byId.has(avatar.id)) return `the id "${avatar.id}" is taken`;
    const problems = ambiguousNames([...this.avatarList, avatar]).filter(
      (p) => p.index === this.avatarList.length,
    );
    return problems[0]?.message;
  }

  /** Adds an avatar that has no {@link conflict}; false (nothing changes) when it has one. */
  add(avatar: AvatarDefinition): boolean {
    if (this.conflict(avatar) !== undefined) return false;
    const profile = toProfile(avatar);
    this.avatarList = [...this.avatarList, avatar];
    this.profiles = [...this.profiles, profile];
    this.byId.set(avatar.id, avatar);
    this.profilesById.set(avatar.id, profile);
    this.changes$.next({ type: 'avatar.added', avatar });
    return true;
  }

  /** Removes a created avatar; returns it, or undefined when the cast has no such id or was given it. */
  remove(id: string): AvatarDefinition | undefined {
    const avatar = this.byId.get(id);
    if (!avatar || this.givenIds.has(id)) return undefined;
    this.avatarList = this.avatarList.filter((a) => a.id !== id);
    this.profiles = this.profiles.filter((p) => p.id !== id);
    this.byId.delete(id);
    this.profilesById.delete(id);
    this.changes$.next({ type: 'avatar.removed', avatar });
    return avatar;
  }
}
