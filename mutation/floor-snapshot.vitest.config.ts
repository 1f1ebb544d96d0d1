import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

// The floor snapshot's mutation run: the readers of stored snapshots (the fast paths, version 1's
// migration) are checked against the schema on thousands of damaged documents, about 10 s per
// mutant, so they have a run of their own apart from the floor's rules.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: [
      'test/floor/floorSnapshot.test.ts',
      'test/floor/floorSnapshot.fastPath.test.ts',
      'test/floor/floorSnapshot.reading.test.ts',
      'test/floor/channelFloor.snapshotContents.test.ts',
      'test/floor/channelFloor.restoreReplay.test.ts',
    ],
    exclude: [...configDefaults.exclude],
    environment: 'node',
    setupFiles: ['test/support/failOnUnhandledRejection.ts'],
    testTimeout: 60_000,
  },
});
