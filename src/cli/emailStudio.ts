import { systemClock } from '../actors/clock.js';
import type { EmailAssistant } from '../actors/email/emailAssistant.js';
import { coordinationFromEnv } from '../config/coordinationFromEnv.js';
import { createRuntime } from '../createRuntime.js';
import type { Logger } from '../logging/logger.js';
import type { TroupeStore } from '../ports/store.js';
import { attachStudio } from '../studio/attachStudio.js';

/** The studio `troupe email --watch --studio` serves, and how to stop it. */
export interface EmailWatchStudio {
  /** The page's URL with its token, to print. */
  url: string;
  /** Stops the studio and the runtime it watches through (not the assistant or the store). */
  close(): Promise<void>;
}

/**
 * `troupe email --watch --studio`: the studio served from the watching process, over its live
 * email assistant (answers given on the page carry the flow on as `troupe inbox answer` does) and
 * its store. A runtime with no avatars gives the page its clock and store; it runs no channel.
 * On 127.0.0.1, any free port, a fresh token.
 */
export async function serveEmailStudio(
  env: Readonly<Record<string, string | undefined>>,
  store: TroupeStore,
  assistant: EmailAssistant,
  logger: Logger,
): Promise<EmailWatchStudio> {
  const config = coordinationFromEnv(env);
  const runtime = createRuntime({ avatars: [], config, store, logger, clock: systemClock });
  try {
    const studio = await attachStudio({
      runtime,
      assistant,
      clock: systemClock,
      logger,
      config,
      host: '127.0.0.1',
      port: 0,
    });
    return {
      url: `${studio.server.url}#token=${studio.server.token}`,
      async close() {
        await studio.close();
        await runtime.stop();
      },
    };
  } catch (error) {
    await runtime.stop();
    throw error;
  }
}
