import { describe, expect, it } from 'vitest';
import {
  RELATIONSHIPS,
  type RelationshipDocument,
  relationshipNote,
} from '../../src/actors/relationshipTracker.js';
import { createScriptedModel } from '../../src/adapters/llm/scriptedModel.js';
import { createTestRuntime, mockModel } from '../../src/testing/index.js';

describe('relationship tracking', () => {
  it('records avatar-to-avatar exchanges, stores them, and puts them in later prompts', async () => {
    const scripted = createScriptedModel();
    // The offline model's replies (it mentions avatars back), with every prompt recorded.
    const model = mockModel((request) => scripted.generateTurn(request), { local: true });
    const prompts = model.calls;
    const t = createTestRuntime({ model });
    await t.summon('nova');
    await t.summon('rex');
    await t.say('Nova, ask Rex about bread');
    await t.advance(10 * 60_000);
    await t.stop();

    const nova = await t.store.documents.get<RelationshipDocument>(RELATIONSHIPS, 'nova');
    const withRex = nova?.value.partners.rex;
    expect(withRex?.exchanges).toBeGreaterThan(0);
    expect(withRex?.channels['test:room']).toBe(withRex?.exchanges);
    expect(withRex?.recent.length).toBeGreaterThan(0);
    const rex = await t.store.documents.get<RelationshipDocument>(RELATIONSHIPS, 'rex');
    expect(rex?.value.partners.nova?.exchanges).toBe(withRex?.exchanges);

    // A later turn between them carries the note in its system prompt.
    const later = createTestRuntime({ model, store: t.store, startAt: t.clock.now() });
    prompts.length = 0;
    await later.say('Rex, what would Nova say about sourdough?', { messageId: 'later-1' });
    await later.advance(60_000);
    const systems = prompts.map((p) => p.prompt.system).join('\n');
    expect(systems).toMatch(/You and (Nova|Rex) have talked \d+ times?/);
    await later.stop();
  });

  it('writes a short, clipped note', () => {
    const note = relationshipNote(
      [
        {
          partnerId: 'rex',
          exchanges: 3,
          firstAt: 0,
          lastAt: 60_000,
          channels: { 'test:room': 3 },
          recent: [
            { at: 60_000, speakerId: 'rex', channelKey: 'test:room', text: 'Sourdough is a lifestyle.' },
          ],
        },
      ],
      (id) => (id === 'rex' ? 'Rex' : id),
      4 * 60_000,
    );
    expect(note).toBe(
      'Your history with them:\n- You and Rex have talked 3 times, last 3 minutes ago. Lately — Rex: “Sourdough is a lifestyle.”',
    );
  });
});
