import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The email assistant's mutation run: the in-process email tests (the offline model, the fake OpenAI server, the local
// mailbox). The CLI tests that spawn a process and the browser tests are left out: each mutant would pay seconds for them.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['test/email.*.test.ts', 'test/droppedShare.test.ts'],
    environment: 'node',
    setupFiles: ['test/support/failOnUnhandledRejection.ts'],
    testTimeout: 30_000,
  },
});
