import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';
import { ConfigError, type ConfigProblem } from '../../config/configError.js';
import type { Logger } from '../../logging/logger.js';
import type { SpeechSynthesizer } from '../../ports/speech.js';
import { createAiSdkSynthesizer } from './aiSdkSynthesizer.js';
import { createEspeakSynthesizer } from './espeakSynthesizer.js';
import { VOICE_ID_PATTERN } from './speechText.js';

/** The environment variables that choose a text-to-speech engine, with defaults and docs. */
export const speechSettings = {
  TROUPE_SPEECH_PROVIDER: {
    default: 'none',
    doc: '`none` (voice requests are sent as text), `espeak-ng` (local, Debian package `espeak-ng`) or `openai` (needs `OPENAI_API_KEY`).',
  },
  TROUPE_SPEECH_VOICE: {
    default: 'engine default',
    doc: 'Default voice: an espeak-ng voice such as `en-us+f3`, or an OpenAI voice such as `alloy`. Avatars may set their own `voiceId`.',
  },
  TROUPE_SPEECH_MODEL: { default: 'tts-1', doc: 'OpenAI speech model.' },
} as const;

const providerSchema = z.enum(['none', 'espeak-ng', 'openai']);

/**
 * Picks the speech engine from the environment. Returns `undefined` for `none`, so the runtime
 * sends voice requests as text.
 * @throws ConfigError naming every bad variable.
 */
export function speechFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: { logger?: Logger } = {},
): { speech: SpeechSynthesizer | undefined; description: string } {
  const problems: ConfigProblem[] = [];
  const rawProvider = (env.TROUPE_SPEECH_PROVIDER ?? 'none').trim().toLowerCase() || 'none';
  const provider = providerSchema.safeParse(rawProvider);
  if (!provider.success)
    problems.push({
      variable: 'TROUPE_SPEECH_PROVIDER',
      value: rawProvider,
      expected: 'one of none, espeak-ng, openai',
    });
  const voice = env.TROUPE_SPEECH_VOICE?.trim() || undefined;
  if (voice !== undefined && !VOICE_ID_PATTERN.test(voice))
    problems.push({
      variable: 'TROUPE_SPEECH_VOICE',
      value: voice,
      expected: 'letters, digits, "-", "+" or "_"',
    });
  if (provider.success && provider.data === 'openai' && !env.OPENAI_API_KEY?.trim())
    problems.push({
      variable: 'OPENAI_API_KEY',
      value: '',
      expected: 'an API key, required by TROUPE_SPEECH_PROVIDER=openai',
    });
  if (problems.length > 0) throw new ConfigError(problems);
  const logger = options.logger;
  switch (provider.data) {
    case 'espeak-ng':
      return {
        speech: createEspeakSynthesizer({ ...(voice ? { voice } : {}), ...(logger ? { logger } : {}) }),
        description: `espeak-ng${voice ? ` (${voice})` : ''}`,
      };
    case 'openai': {
      const modelId = env.TROUPE_SPEECH_MODEL?.trim() || 'tts-1';
      return {
        speech: createAiSdkSynthesizer({
          model: createOpenAI({ apiKey: env.OPENAI_API_KEY?.trim() }).speech(modelId),
          ...(voice ? { voice } : {}),
          ...(logger ? { logger } : {}),
        }),
        description: `openai:${modelId}${voice ? ` (${voice})` : ''}`,
      };
    }
    default:
      return { speech: undefined, description: 'none (voice requests are sent as text)' };
  }
}
