import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    setupFiles: ['test/support/failOnUnhandledRejection.ts'],
    // A guard against a hang, not a speed limit: on a loaded machine tests are only slower, and
    // they wait on signals (the runtime's idle signal, a child's output, a server's events).
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // expect.poll watches real I/O (a browser page, a child process): its default second is a
    // speed limit on a loaded machine; a minute is a guard against a hang.
    expect: { poll: { timeout: 60_000 } },
  },
});
