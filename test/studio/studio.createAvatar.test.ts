/**
 * The studio's playground: "summon someone new" (`POST /api/playground/create`) creates the avatar
 * when nobody has the name, summons it, and the page's state lists it; refusals answer with the
 * creation's error code and an HTTP status to match.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AvatarCreationOptions } from '../../src/actors/avatarCreator.js';
import { SimulatedClock } from '../../src/actors/clock.js';
import { type OpenedStudio, openStudio } from '../../src/studio/openStudio.js';

const opened: OpenedStudio[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});

async function studio(avatarCreation?: AvatarCreationOptions) {
  const staticDir = await mkdtemp(join(tmpdir(), 'troupe-studio-static-'));
  await writeFile(join(staticDir, 'index.html'), '<!doctype html><title>test</title>');
  const s = await openStudio({
    clock: new SimulatedClock(),
    port: 0,
    staticDir,
    ...(avatarCreation ? { avatarCreation } : {}),
  });
  opened.push(s);
  const call = async (method: string, path: string, body?: unknown) => {
    const reply = await fetch(`${s.url}api/${path}`, {
      method,
      headers: { Authorization: `Bearer ${s.token}`, 'Content-Type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: reply.status, body: (await reply.json()) as Answer };
  };
  return { s, call };
}

/** The answers of the routes used here. */
interface Answer {
  avatar?: { id: string; name: string };
  created?: boolean;
  avatars?: unknown[];
  error?: { code: string; message: string };
}

describe('the studio playground creates avatars', () => {
  it('a name nobody has is created and summoned, and the state lists it present', async () => {
    const { s, call } = await studio();
    const made = await call('POST', 'playground/create', { name: 'Gandalf' });
    expect(made).toEqual({
      status: 202,
      body: { avatar: { id: expect.stringMatching(/^gandalf-/u), name: 'Gandalf' }, created: true },
    });
    await s.advance(0);
    const { body } = await call('GET', 'avatars');
    expect(body.avatars).toContainEqual({ id: made.body.avatar?.id, name: 'Gandalf', present: true });
    const again = await call('POST', 'playground/create', { name: 'gandalf' });
    expect(again.body.created).toBe(false);
    expect(s.runtime.avatars.filter((a) => a.name === 'Gandalf')).toHaveLength(1);
  });

  it('refusals carry the creation error code and a matching status', async () => {
    const { call } = await studio({ enabled: true, perPersonPerDay: 1 });
    const bad = await call('POST', 'playground/create', { name: 'Bad\u0007Name' });
    expect([bad.status, bad.body.error?.code]).toEqual([400, 'TROUPE_AVATAR_NAME_INVALID']);
    expect((await call('POST', 'playground/create', { name: 'One' })).status).toBe(202);
    const limit = await call('POST', 'playground/create', { name: 'Two' });
    expect([limit.status, limit.body.error?.code]).toEqual([429, 'TROUPE_AVATAR_CREATION_LIMIT']);
    const empty = await call('POST', 'playground/create', { nom: 'x' });
    expect(empty.status).toBe(400);
  });

  it('with creation off an unknown name is a 404 naming the setting', async () => {
    const { call } = await studio({ enabled: false });
    const off = await call('POST', 'playground/create', { name: 'Gandalf' });
    expect([off.status, off.body.error?.code]).toEqual([404, 'TROUPE_AVATAR_CREATION_OFF']);
    expect(off.body.error?.message).toContain('TROUPE_SUMMON_CREATES');
  });
});
