import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The email assistant's mutation run: the tests of the email modules themselves. Each mutant
// re-imports every test file that covers it, so the tests that run the whole assistant (its actor,
// stores, mailboxes, the CLI, the AI SDK providers) are left out: each would add seconds to every
// mutant, and what they check of src/email is checked here by focused tests of the same modules.
// test/email/email.htmlText.test.ts is left out too: its hostile bodies of millions of characters take
// over 30 s each once the converter is instrumented.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: [
      'test/email/email.triageRules.test.ts',
      'test/email/email.offlineTriage.test.ts',
      'test/email/email.addresses.test.ts',
      'test/email/email.triageRouter.test.ts',
      'test/email/email.memoryUpdate.test.ts',
      'test/email/email.profileRules.test.ts',
      'test/email/email.htmlShape.test.ts',
      'test/email/email.input.test.ts',
      'test/email/email.inboxView.test.ts',
      'test/email/email.triageEval.test.ts',
      'test/email/email.replyTools.test.ts',
      'test/email/email.profileCompaction.test.ts',
      'test/email/email.inbox.test.ts',
      'test/email/email.memory.test.ts',
      'test/email/email.responseAgent.test.ts',
      'test/email/email.agentMessages.test.ts',
      'test/email/email.responseAgentRules.test.ts',
      'test/email/droppedShare.test.ts',
    ],
    environment: 'node',
    setupFiles: ['test/support/failOnUnhandledRejection.ts'],
    testTimeout: 30_000,
  },
});
