import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  checkXstateVersion,
  installedXstateVersion,
  XSTATE_VERIFIED_VERSION,
} from '../../src/engine/xstateInternals.js';
import { TroupeError } from '../../src/ports/troupeError.js';

const json = (path: string) => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'));

/** The error checking `installed` against 5.33.3 throws, or undefined when it passes. */
function versionError(installed: string): TroupeError | undefined {
  try {
    checkXstateVersion(installed, '5.33.3');
    return undefined;
  } catch (error) {
    if (TroupeError.isInstance(error)) return error;
    throw error;
  }
}

describe('the xstate the compiled engine runs against', () => {
  it('is the version Troupe pins exactly, and the one installed', () => {
    const pkg = json('../../package.json');
    const lock = json('../../package-lock.json');
    expect(pkg.dependencies.xstate).toBe(XSTATE_VERIFIED_VERSION);
    expect(lock.packages[''].dependencies.xstate).toBe(XSTATE_VERIFIED_VERSION);
    expect(installedXstateVersion()).toBe(XSTATE_VERIFIED_VERSION);
    expect(() => checkXstateVersion(installedXstateVersion())).not.toThrow();
  });

  it('accepts another patch release of the verified minor', () => {
    expect(versionError('5.33.3')).toBeUndefined();
    expect(versionError('5.33.0')).toBeUndefined();
    expect(versionError('5.33.12')).toBeUndefined();
  });

  it.each(['5.34.0', '5.32.9', '6.0.0', '4.38.3', '5.3.33', 'not-a-version'])(
    'refuses %s with TROUPE_XSTATE_UNSUPPORTED and says what to do',
    (installed) => {
      const error = versionError(installed);
      expect(error?.code).toBe('TROUPE_XSTATE_UNSUPPORTED');
      expect(error?.message).toContain(`xstate ${installed} is installed`);
      expect(error?.message).toContain('Install xstate@5.33.3');
      expect(error?.message).toContain("engine: 'xstate'");
      expect(error?.details).toEqual({ installed, verified: '5.33.3' });
    },
  );
});
