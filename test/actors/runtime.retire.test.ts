/**
 * Channel actors are retired when nothing is left in their channel and started again on the next
 * event. A retired actor may still have a reply on its way out (an error message, which the floor
 * does not wait for); its late outcome must not touch the actor that took the channel since.
 */
import { describe, expect, it } from 'vitest';
import type {
  Transport,
  TransportLimits,
  TransportMessage,
  TransportReceipt,
} from '../../src/ports/transport.js';
import { TroupeError } from '../../src/ports/troupeError.js';
import { createTestRuntime, mockModel } from '../../src/testing/index.js';

const room = { kind: 'test', id: 'room' };
const avatars = [
  { id: 'nova', name: 'Nova' },
  { id: 'rex', name: 'Rex' },
];
const ADA = { id: 'u1', name: 'Ada' };

/** A transport whose sends wait until the test releases them. */
class HeldTransport implements Transport {
  readonly kind = 'test';
  readonly limits: TransportLimits = { maxTextLength: 2000, voice: false, attachments: false };
  readonly held: { message: TransportMessage; release: () => void }[] = [];
  holding = true;
  private seq = 0;

  send(message: TransportMessage): Promise<TransportReceipt> {
    const receipt = { messageId: `held-${++this.seq}` };
    if (!this.holding) return Promise.resolve(receipt);
    return new Promise((resolve) => this.held.push({ message, release: () => resolve(receipt) }));
  }
}

/** Every turn fails, so the person gets an error message (origin `error`, not awaited by the floor). */
const failingModel = mockModel(
  () => new TroupeError('TROUPE_MODEL_UNAVAILABLE', 'The model is away.', { retryable: true }),
  { readsPrompt: false },
);

async function turnOfTheLoop(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Nova's greeting fails; its error message hangs in the transport while Nova is dismissed and Rex summoned. */
async function lateOutcomeOfARetiredActor(releaseWhileLoading: boolean) {
  const transport = new HeldTransport();
  const t = createTestRuntime({
    avatars,
    transports: [transport],
    model: failingModel,
    config: { summonProactiveEnabled: false },
  });
  t.runtime.send({ type: 'avatar.summon', channel: room, avatarId: 'nova', by: ADA });
  await turnOfTheLoop();
  expect(transport.held).toHaveLength(1);
  t.runtime.send({ type: 'avatar.dismiss', channel: room, avatarId: 'nova' });
  await turnOfTheLoop();
  expect(t.runtime.activeChannels()).toEqual([]); // retired: nobody is left in the channel
  t.runtime.send({ type: 'avatar.summon', channel: room, avatarId: 'rex', by: ADA });
  if (!releaseWhileLoading) await turnOfTheLoop();
  transport.holding = false;
  transport.held[0]?.release();
  await t.settle();
  return t;
}

describe('a retired channel actor’s late outcome', () => {
  it('leaves the actor that took the channel since alone', async () => {
    const t = await lateOutcomeOfARetiredActor(false);
    const stopped = t.inspection.filter((e) => e.type === 'actor.stopped');
    expect(stopped.map((e) => (e as { reason: string }).reason)).toEqual(['finished']);
    expect(t.runtime.view(room)?.present.map((p) => p.id)).toEqual(['rex']);
    await t.stop();
  });

  it('does not lose the summon the new actor is still loading', async () => {
    const t = await lateOutcomeOfARetiredActor(true);
    expect((await t.runtime.open(room)).present.map((p) => p.id)).toEqual(['rex']);
    await t.stop();
  });
});
