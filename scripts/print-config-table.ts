// Prints the README's configuration tables from their single sources of truth:
// coordination knobs, then the language model, speech, the store, the composer with its ERP, Discord, and the email assistant with Gmail.
import { discordSettings } from '../src/adapters/discord/discordSettings.js';
import { gmailSettings } from '../src/adapters/gmail/gmailSettings.js';
import { modelSettings } from '../src/adapters/llm/modelSettings.js';
import { erpSettings } from '../src/adapters/sql/erpFromEnv.js';
import { storeSettings } from '../src/adapters/store/storeFromEnv.js';
import { speechSettings } from '../src/adapters/voice/speechFromEnv.js';
import { composerSettings } from '../src/composer/composerConfig.js';
import { coordinationSettings } from '../src/config/coordinationConfig.js';
import { replySettings } from '../src/config/replySettings.js';
import { emailSettings } from '../src/email/emailSettings.js';

const fmt = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
const header = ['| Variable | Default | What it does |', '| --- | --- | --- |'];
const coordination = [...header];
for (const [name, s] of Object.entries(coordinationSettings))
  coordination.push(`| \`${name}\` | \`${fmt(s.default)}\` | ${s.doc} |`);
const model = [...header];
for (const [name, s] of Object.entries(modelSettings)) model.push(`| \`${name}\` | ${s.shown} | ${s.doc} |`);
for (const [name, s] of Object.entries(replySettings))
  model.push(`| \`${name}\` | ${s.default} | ${s.doc} |`);
const speech = [...header];
for (const [name, s] of Object.entries(speechSettings))
  speech.push(`| \`${name}\` | ${s.default} | ${s.doc} |`);
const store = [...header];
for (const [name, s] of Object.entries(storeSettings))
  store.push(`| \`${name}\` | ${s.default} | ${s.doc} |`);
const composer = [...header];
for (const [name, s] of Object.entries(composerSettings))
  composer.push(`| \`${name}\` | \`${fmt(s.default)}\` | ${s.doc} |`);
for (const [name, s] of Object.entries(erpSettings))
  composer.push(`| \`${name}\` | ${s.default} | ${s.doc} |`);
const discord = [...header];
for (const [name, s] of Object.entries(discordSettings))
  discord.push(`| \`${name}\` | ${s.default} | ${s.doc} |`);
const email = [...header];
for (const [name, s] of Object.entries(emailSettings))
  email.push(`| \`${name}\` | ${s.default} | ${s.doc} |`);
for (const [name, s] of Object.entries(gmailSettings))
  email.push(`| \`${name}\` | ${s.default} | ${s.doc} |`);
process.stdout.write(
  `${[coordination, model, speech, store, composer, discord, email].map((t) => t.join('\n')).join('\n\n')}\n`,
);
