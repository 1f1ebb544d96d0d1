import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The routing actor's mutation run: tests that drive the actor itself on simulated time with the
// in-memory outbox. Each mutant re-runs the tests that cover it, so these import only the actor and
// its ports, not a whole runtime (the runtime tests cover routing too, at seconds per mutant).
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['test/actors/routing.*.test.ts'],
    environment: 'node',
    setupFiles: ['test/support/failOnUnhandledRejection.ts'],
    testTimeout: 30_000,
  },
});
