import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The email assistant's mutation run: the email tests that are quick to load. Each mutant re-imports
// every test file that covers it, so the files whose imports take seconds (the CLI, the SQLite and
// MongoDB stores, the AI SDK providers) are left out, as are the tests that spawn a process or a
// browser; their behaviours are covered here by focused tests of the same modules.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: [
      'test/email.triageRules.test.ts',
      'test/email.offlineTriage.test.ts',
      'test/email.addresses.test.ts',
      'test/email.triageRouter.test.ts',
      'test/email.memoryUpdate.test.ts',
      'test/email.inbox.test.ts',
      'test/email.htmlText.test.ts',
      'test/email.memory.test.ts',
      'test/email.responseAgent.test.ts',
      'test/email.agentHistory.test.ts',
      'test/email.assistant.test.ts',
      'test/email.replyMime.test.ts',
      'test/droppedShare.test.ts',
    ],
    environment: 'node',
    setupFiles: ['test/support/failOnUnhandledRejection.ts'],
    testTimeout: 30_000,
  },
});
