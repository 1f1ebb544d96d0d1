/**
 * Two avatars who just ended a thread together wait before they open another: THREAD_BACKOFF_BASE
 * after the first, twice that after a second within the window; pairs that have not talked within
 * the window are forgotten.
 */
import { describe, expect, it } from 'vitest';
import { ANN, FloorScene, onlyClaim, quiet, turns } from '../support/floorScene.js';
import { ofType } from '../support/floorTraffic.js';

/** Luna asks Milo; Milo's one-turn thread answer ends the thread at `endAt`. */
function lunaAndMiloTalked(s: FloorScene, at: number, asker = 'luna', answerer = 'milo'): void {
  const name = (id: string) => id[0]?.toUpperCase() + id.slice(1);
  const first = onlyClaim(s.say(at, ANN, `${name(asker)}, hi`));
  const second = onlyClaim(s.deliver(at + 1_000, first.turnId, `${name(answerer)}, thoughts?`));
  expect(second).toMatchObject({ avatarId: answerer, rung: 'thread' });
  const ended = s.deliver(at + 2_000, second.turnId, `${name(asker)}, fine`);
  expect(ended).toContainEqual(expect.objectContaining({ type: 'thread.ended', outcome: 'exhausted' }));
}

/** Ann asks `asker`, whose answer names `named`; returns what the floor did with that answer. */
function names(s: FloorScene, at: number, asker: string, named: string) {
  const name = (id: string) => id[0]?.toUpperCase() + id.slice(1);
  const claim = onlyClaim(s.say(at, ANN, `${name(asker)}, again`));
  return s.deliver(at, claim.turnId, `${name(named)}, what now?`);
}

describe('backing off between threads', () => {
  const config = { botMentionThreadTurns: 1 };

  it('holds back either of the pair from answering the other until the backoff ends, not others', () => {
    const s = new FloorScene(config);
    lunaAndMiloTalked(s, 1_000); // ends at 3 000: backoff until 13 000
    expect(quiet(names(s, 5_000, 'milo', 'luna'))).toEqual([{ avatarId: 'luna', reason: 'thread-backoff' }]);
    expect(quiet(names(s, 6_000, 'luna', 'milo'))).toEqual([{ avatarId: 'milo', reason: 'thread-backoff' }]);
    expect(turns(names(s, 7_000, 'luna', 'zed'))).toEqual(['zed@thread']);
  });

  it('naming two, the one backing off with the author stays out of the new thread', () => {
    const s = new FloorScene(config);
    lunaAndMiloTalked(s, 1_000);
    const effects = names(s, 5_000, 'luna', 'zed and Milo');
    expect(quiet(effects)).toEqual([{ avatarId: 'milo', reason: 'thread-backoff' }]);
    expect(ofType(effects, 'thread.opened')).toMatchObject([{ participants: ['luna', 'zed'] }]);
  });

  it('ends the backoff exactly at its deadline', () => {
    const s = new FloorScene(config);
    lunaAndMiloTalked(s, 1_000);
    expect(turns(names(s, 13_000, 'milo', 'luna'))).toEqual(['luna@thread']);
  });

  it('doubles the wait after a second thread within the window, and forgets pairs outside it', () => {
    const s = new FloorScene(config);
    lunaAndMiloTalked(s, 1_000); // ends at 3 000
    lunaAndMiloTalked(s, 13_000); // ends at 15 000: backoff until 35 000
    expect(quiet(names(s, 30_000, 'milo', 'luna'))).toEqual([{ avatarId: 'luna', reason: 'thread-backoff' }]);
    lunaAndMiloTalked(s, 1_000_000, 'luna', 'zed');
    expect(s.floor.snapshot().threadBackoff?.map(([, b]) => b)).toEqual([
      { endedAt: 1_002_000, level: 0, until: 1_012_000 },
    ]);
  });
});
