/**
 * The turn executor keeps its map of avatar ids by name between turns; the cast's map changes in
 * place (avatars added and removed), and every turn must see it as it is now: the same partners as
 * a map built afresh for that turn.
 */
import { describe, expect, it } from 'vitest';
import type { RelationshipTracker } from '../../src/actors/relationshipTracker.js';
import { TurnExecutor } from '../../src/actors/turnExecutor.js';
import { createScriptedModel } from '../../src/adapters/llm/scriptedModel.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import type { AvatarProfile, TurnClaim } from '../../src/floor/floorTypes.js';

type NoteOf = (avatar: AvatarProfile, turn: TurnClaim) => Promise<string | undefined>;

function setup() {
  const cast = new Map<string, AvatarProfile>();
  const asked: string[][] = [];
  const relationships = {
    about: async (_id: string, partnerIds: readonly string[]) => {
      asked.push([...partnerIds].sort());
      return [];
    },
  } as unknown as RelationshipTracker;
  const executor = new TurnExecutor({
    model: createScriptedModel(),
    history: createMemoryStore().history,
    relationships,
    avatars: cast,
  });
  // The private step under test: which avatars a turn's names are.
  const noteOf = (executor as unknown as { relationshipNote: NoteOf }).relationshipNote.bind(executor);
  const speaker: AvatarProfile = { id: 'speaker', name: 'Speaker' };
  cast.set(speaker.id, speaker);
  const partnersFor = async (presentNames: string[], threadPartnerNames: string[] = []) => {
    asked.length = 0;
    const turn = {
      claimedAt: 0,
      context: { presentNames, threadPartnerNames, closing: false },
    } as unknown as TurnClaim;
    await noteOf(speaker, turn);
    // What the map built afresh for this turn says.
    const byName = new Map([...cast.values()].map((a) => [a.name, a.id]));
    const fresh = new Set(
      [...threadPartnerNames, ...presentNames]
        .flatMap((n) => byName.get(n) ?? [])
        .filter((id) => id !== 'speaker'),
    );
    expect(asked[0] ?? []).toEqual([...fresh].sort());
    return asked[0] ?? [];
  };
  const add = (id: string, name: string) => cast.set(id, { id, name });
  return { cast, add, partnersFor };
}

describe('avatar ids by name across turns', () => {
  it('follows avatars added, removed, replaced under the same size, and renamed', async () => {
    const { cast, add, partnersFor } = setup();
    add('a', 'Ann');
    add('b', 'Bo');
    add('c', 'Cy');
    expect(await partnersFor(['Ann', 'Bo'], ['Cy'])).toEqual(['a', 'b', 'c']);
    expect(await partnersFor(['Ann'])).toEqual(['a']); // from the kept map

    cast.delete('c');
    add('d', 'Cy'); // same size, the name now someone else's
    expect(await partnersFor(['Cy', 'Bo'])).toEqual(['b', 'd']);

    add('e', 'Eve'); // a name the kept map has never seen
    expect(await partnersFor(['Eve'])).toEqual(['e']);

    cast.delete('b');
    expect(await partnersFor(['Bo', 'Ann'])).toEqual(['a']);

    cast.set('a', { id: 'a', name: 'Annie' }); // renamed in place
    expect(await partnersFor(['Ann'])).toEqual([]);
    expect(await partnersFor(['Annie', 'Speaker', 'nobody'])).toEqual(['a']);
  });
});
