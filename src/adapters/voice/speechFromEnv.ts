import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';
import { oneOf, text } from '../../config/settingSchemas.js';
import { defineSettings, type EnvRecord, readSettings, throwIfProblems } from '../../config/settings.js';
import type { Logger } from '../../logging/logger.js';
import type { SpeechSynthesizer } from '../../ports/speech.js';
import { createAiSdkSynthesizer } from './aiSdkSynthesizer.js';
import { createEspeakSynthesizer } from './espeakSynthesizer.js';
import { VOICE_ID_PATTERN } from './speechText.js';

/** The environment variables that choose a text-to-speech engine, with defaults and docs. */
export const speechSettings = defineSettings({
  TROUPE_SPEECH_PROVIDER: {
    key: 'provider',
    schema: oneOf(['none', 'espeak-ng', 'openai']),
    default: 'none',
    shown: 'none',
    doc: '`none` (voice requests are sent as text), `espeak-ng` (local, Debian package `espeak-ng`) or `openai` (needs `OPENAI_API_KEY`).',
  },
  TROUPE_SPEECH_VOICE: {
    key: 'voice',
    schema: z.string().regex(VOICE_ID_PATTERN, 'letters, digits, "-", "+" or "_"'),
    shown: 'engine default',
    doc: 'Default voice: an espeak-ng voice such as `en-us+f3`, or an OpenAI voice such as `alloy`. Avatars may set their own `voiceId`.',
  },
  TROUPE_SPEECH_MODEL: {
    key: 'modelId',
    schema: text,
    default: 'tts-1',
    shown: 'tts-1',
    doc: 'OpenAI speech model.',
  },
  OPENAI_API_KEY: {
    key: 'openAiApiKey',
    schema: text,
    secret: true,
    doc: 'OpenAI API key (speech provider openai; the language model reads it too).',
  },
});

/**
 * Picks the speech engine from the environment. Returns `undefined` for `none`, so the runtime
 * sends voice requests as text.
 * @throws ConfigError naming every bad variable.
 */
export function speechFromEnv(
  env: EnvRecord,
  options: { logger?: Logger } = {},
): { speech: SpeechSynthesizer | undefined; description: string } {
  const { value, problems } = readSettings(speechSettings, env);
  const { provider, voice, modelId, openAiApiKey } = value;
  if (provider === 'openai' && !openAiApiKey)
    problems.push({
      variable: 'OPENAI_API_KEY',
      value: '',
      expected: 'an API key, required by TROUPE_SPEECH_PROVIDER=openai',
    });
  throwIfProblems(problems);
  const logger = options.logger;
  switch (provider) {
    case 'espeak-ng':
      return {
        speech: createEspeakSynthesizer({ ...(voice ? { voice } : {}), ...(logger ? { logger } : {}) }),
        description: `espeak-ng${voice ? ` (${voice})` : ''}`,
      };
    case 'openai': {
      return {
        speech: createAiSdkSynthesizer({
          model: createOpenAI(openAiApiKey !== undefined ? { apiKey: openAiApiKey } : {}).speech(modelId),
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
