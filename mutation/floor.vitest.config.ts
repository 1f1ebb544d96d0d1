import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The floor's mutation run: only the tests that drive src/machines/floor, the fast example tests (the property tests take minutes per run under Stryker).
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: [
      'test/channelFloor.test.ts',
      'test/floorState.test.ts',
      'test/floorDriver.test.ts',
      'test/avatarPresence.machine.test.ts',
      'test/channelFloor.mutants.test.ts',
    ],
    environment: 'node',
    setupFiles: ['test/support/failOnUnhandledRejection.ts'],
    testTimeout: 30_000,
  },
});
