import { describe, expect, it } from 'vitest';
import type { TurnGenerationRequest } from '../../src/ports/model.js';
import type { TransportMessage, TransportReceipt } from '../../src/ports/transport.js';
import { TroupeError } from '../../src/ports/troupeError.js';
import { createTestRuntime, type MockModel, mockModel, RecordingTransport } from '../../src/testing/index.js';

const nova = { id: 'nova', name: 'Nova', residentIn: ['test:room'] };

/**
 * Work that takes `ms` of real time, as slow work does on a loaded machine (a subprocess, a
 * database starting): the duration is the port's, the test never waits on it by itself.
 */
const realWork = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A controllable promise. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A model whose answer waits for `wait`; `local` says whether it runs in the process. */
function modelWaitingOn(
  wait: (request: TurnGenerationRequest) => Promise<void>,
  local: boolean | undefined,
): MockModel {
  return mockModel(
    async (request) => {
      await wait(request);
      return 'I see a comet.';
    },
    local !== undefined ? { local } : {},
  );
}

/** A recording transport (local) whose sends take `ms` of real time. */
class SlowLocalTransport extends RecordingTransport {
  constructor(private readonly ms: number) {
    super();
  }
  override async send(message: TransportMessage): Promise<TransportReceipt> {
    await realWork(this.ms);
    return super.send(message);
  }
}

describe('settling waits for work inside the process however long it takes', () => {
  it('a local model slower than settleLimitMs is waited for, and its reply delivered', async () => {
    // Under the old rule (poll until 50 ms of wall time passed) this threw TROUPE_TEST_NOT_SETTLED.
    const model = modelWaitingOn(() => realWork(250), true);
    const t = createTestRuntime({ avatars: [nova], model, settleLimitMs: 50 });
    await t.say('Nova, what do you see?');
    expect(model.calls).toHaveLength(1);
    expect(t.transport.texts()).toEqual(['I see a comet.']);
    expect(t.runtime.pending()).toEqual([]);
    await t.stop();
  });

  it('a local transport slower than settleLimitMs is waited for', async () => {
    const transport = new SlowLocalTransport(250);
    const t = createTestRuntime({ avatars: [nova], transports: [transport], settleLimitMs: 50 });
    await t.say('Nova, what do you see?');
    expect(transport.texts()).toHaveLength(1);
    expect(t.outcomes.map((o) => o.sent)).toEqual([true]);
    await t.stop();
  });

  it('an external wait that answers within the limit is waited for', async () => {
    const model = modelWaitingOn(() => realWork(100), undefined);
    const t = createTestRuntime({ avatars: [nova], model, settleLimitMs: 30_000 });
    await t.say('Nova, what do you see?');
    expect(t.transport.texts()).toEqual(['I see a comet.']);
    await t.stop();
  });
});

describe('an external wait that never answers', () => {
  it('fails settling after settleLimitMs with a message naming the turn, its channel and the model', async () => {
    const release = deferred();
    // No `local`, not offline: a network model as far as the runtime knows.
    const model = modelWaitingOn(() => release.promise, undefined);
    const t = createTestRuntime({ avatars: [nova], model, settleLimitMs: 100 });
    const error = await t.say('Nova, what do you see?').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(TroupeError.isInstance(error)).toBe(true);
    const failure = error as TroupeError;
    expect(failure.code).toBe('TROUPE_TEST_NOT_SETTLED');
    expect(failure.message).toMatch(/nova's turn in test:room is waiting on the model for \d+(\.\d)? s/u);
    expect(failure.message).toContain('settleLimitMs');
    expect(failure.message).not.toMatch(/piece\(s\)/u);
    expect(failure.details?.pending).toEqual([
      expect.objectContaining({ task: 'turn', avatarId: 'nova', waitingOn: 'model', external: true }),
    ]);
    release.resolve();
    await t.settle();
    expect(t.transport.texts()).toEqual(['I see a comet.']);
    await t.stop();
  });

  it('names a reply whose transport never answers', async () => {
    const never = deferred<TransportReceipt>();
    const transport = {
      kind: 'test',
      limits: { maxTextLength: 2000, voice: false, attachments: false },
      send: () => never.promise,
    };
    const t = createTestRuntime({ avatars: [nova], transports: [transport], settleLimitMs: 100 });
    await expect(t.say('Nova, what do you see?')).rejects.toThrow(
      /nova's reply in test:room is waiting on the transport for \d/u,
    );
    never.resolve({ messageId: 'late' });
    await t.stop();
  });
});

describe('runtime.pending()', () => {
  it('lists each unit of work in flight with what it is and what it waits for, and is empty once idle', async () => {
    const started = deferred();
    const release = deferred();
    const model = modelWaitingOn(() => {
      started.resolve();
      return release.promise;
    }, undefined);
    const t = createTestRuntime({ avatars: [nova], model });
    t.runtime.send({
      type: 'channel.message',
      channel: { kind: 'test', id: 'room' },
      messageId: 'h1',
      author: { kind: 'human', id: 'u1', name: 'Ada' },
      text: 'Nova, what do you see?',
    });
    await started.promise;
    const pending = t.runtime.pending();
    expect(pending).toEqual([
      expect.objectContaining({
        task: 'turn',
        channel: 'test:room',
        avatarId: 'nova',
        waitingOn: 'model',
        external: true,
      }),
    ]);
    expect(pending[0]?.description).toMatch(/^nova's turn in test:room is waiting on the model for /u);
    release.resolve();
    await t.settle();
    expect(t.runtime.pending()).toEqual([]);
    await t.stop();
  });

  it('marks the offline model, the memory store and the recording transport as inside the process', async () => {
    const t = createTestRuntime({ avatars: [nova] });
    const seen: { waitingOn: string; external: boolean }[] = [];
    const off = t.runtime.onProgress(() => {
      for (const p of t.runtime.pending()) seen.push({ waitingOn: p.waitingOn, external: p.external });
    });
    await t.say('Nova, what do you see?');
    off();
    expect(t.transport.texts()).toHaveLength(1);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((s) => s.external)).toEqual([]);
    await t.stop();
  });
});

/** A recording transport (local) that refuses the first attempt of every reply, retryably. */
class FirstAttemptFails extends RecordingTransport {
  private readonly tried = new Set<string>();
  override async send(message: TransportMessage): Promise<TransportReceipt> {
    if (!this.tried.has(message.idempotencyKey)) {
      this.tried.add(message.idempotencyKey);
      throw new TroupeError('TROUPE_TRANSPORT_UNAVAILABLE', 'busy, try again', { retryable: true });
    }
    return super.send(message);
  }
}

describe('a reply queued behind one waiting for its retry', () => {
  it('settling returns (the reply before it waits on simulated time), and advancing time sends both once', async () => {
    const transport = new FirstAttemptFails();
    const t = createTestRuntime({ avatars: [nova, { id: 'rex', name: 'Rex' }], transports: [transport] });
    await t.say('Nova, are you there?');
    // Nova's reply waits for its retry's backoff on the simulated clock; Rex's greeting, for it.
    await t.summon('rex');
    const queued = t.runtime.pending().filter((w) => w.waitingOn === 'queue');
    expect(queued).toHaveLength(1);
    expect(queued[0]?.description).toMatch(
      /rex's reply in test:room is waiting on the reply before it in its channel \(in process\)/,
    );
    expect(transport.sent).toEqual([]);
    await t.advance(60_000);
    const keys = transport.sent.map((m) => m.idempotencyKey);
    // Both went out (and what followed in the minute), each once.
    expect(transport.sent.map((m) => m.speaker?.avatarId).slice(0, 2)).toEqual(['nova', 'rex']);
    expect(new Set(keys).size).toBe(keys.length);
    expect(t.runtime.pending()).toEqual([]);
    await t.stop();
  }, 30_000);
});
