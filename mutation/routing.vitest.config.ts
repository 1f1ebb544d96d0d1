import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The routing actor's mutation run: the runtime tests that send through it.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: [
      'test/runtime.delivery.test.ts',
      'test/runtime.faults.test.ts',
      'test/runtime.abort.test.ts',
      'test/runtime.actors.test.ts',
      'test/runtime.retire.test.ts',
      'test/runtime.persistence.test.ts',
      'test/terminalTransport.test.ts',
      'test/routing.mutants.test.ts',
    ],
    environment: 'node',
    setupFiles: ['test/support/failOnUnhandledRejection.ts'],
    testTimeout: 30_000,
  },
});
