import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

// The floor's mutation run: only the tests that drive src/floor, the fast example tests
// (the property and snapshot-replay tests take minutes per run under Stryker).
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: [
      'test/floor/channelFloor*.test.ts',
      'test/floor/floorState.test.ts',
      'test/floor/floorDriver.test.ts',
      'test/machines/avatarPresence.machine.test.ts',
    ],
    exclude: [...configDefaults.exclude, 'test/floor/channelFloor.properties.test.ts'],
    environment: 'node',
    setupFiles: ['test/support/failOnUnhandledRejection.ts'],
    testTimeout: 30_000,
  },
});
