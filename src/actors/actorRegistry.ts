/** Anything the registry can hold: it must be stoppable. */
export interface RegisteredActor {
  stop(): void;
}

/**
 * Our own actor registry (docs/architecture.md, invariant 8): a map from key to actor, activated on demand and
 * dropped when finished, instead of thousands of children under one parent machine (which costs
 * about 4 KB each and copies the children map on every spawn).
 */
export class ActorRegistry<A extends RegisteredActor> {
  private readonly actors = new Map<string, A>();

  /** The actor for `key`, if active. */
  get(key: string): A | undefined {
    return this.actors.get(key);
  }

  /** The actor for `key`, activated with `create` if it is not active; `created` says which. */
  activate(key: string, create: () => A): { actor: A; created: boolean } {
    const existing = this.actors.get(key);
    if (existing) return { actor: existing, created: false };
    const actor = create();
    this.actors.set(key, actor);
    return { actor, created: true };
  }

  /** Stops and forgets one actor; returns whether it was active. */
  stop(key: string): boolean {
    const actor = this.actors.get(key);
    if (!actor) return false;
    this.actors.delete(key);
    actor.stop();
    return true;
  }

  /** Stops every actor. */
  stopAll(): string[] {
    const keys = [...this.actors.keys()];
    for (const key of keys) this.stop(key);
    return keys;
  }

  /** Active actors. */
  get size(): number {
    return this.actors.size;
  }

  /** Keys of the active actors. */
  keys(): IterableIterator<string> {
    return this.actors.keys();
  }
}
