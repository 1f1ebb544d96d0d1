import { defineConfig } from 'vitest/config';
import base from './email.vitest.config.js';

// The run over the email's input and Markdown (`emailInput.ts`, `emailMarkdown.ts`): nearly every
// email test reads an email, so each mutant of these files would run most of them. This run keeps
// the tests that check them directly: reading an email, its Markdown in the inbox and the prompts.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'test/email/email.input.test.ts',
      'test/email/email.inbox.test.ts',
      'test/email/email.inboxView.test.ts',
      'test/email/email.triageRouter.test.ts',
      'test/email/email.agentMessages.test.ts',
      'test/email/email.offlineTriage.test.ts',
    ],
  },
});
