import { openDefaultStore } from '../adapters/store/storeFromEnv.js';
import { terminalText } from '../delivery/terminalText.js';
import { type MemoryRefusal, readRefusals } from '../email/memoryRefusals.js';
import { memoryNamespaces, PREFERENCES_KEY } from '../email/triagePreferences.js';
import { createLogger } from '../logging/logger.js';
import { logLevelFromEnv } from '../logging/logLevel.js';
import type { MemoryRecord, TroupeStore } from '../ports/store.js';
import { isTroupeError } from '../ports/troupeError.js';
import { type EmailAgentSettings, emailAgentSettingsFromEnv } from './emailAgentSettings.js';
import { fail } from './fail.js';

/** The profiles `troupe preferences` shows, by the name a person types. */
export const preferenceProfiles = {
  triage: memoryNamespaces.triage,
  response: memoryNamespaces.response,
  calendar: memoryNamespaces.calendar,
} as const;

/** What `troupe preferences` needs. */
export interface PreferencesCommandOptions {
  /** Which profile: triage, response or calendar (default: all three). */
  which?: string;
  /** Also list every earlier version with what it changed. */
  history: boolean;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
}

/**
 * `troupe preferences [triage|response|calendar] [--history]`: the user's background (a setting,
 * shown when no profile is named) and what the email assistant has learned, as it stands
 * (version, when, from which answer), and with `--history` every earlier version with the lines
 * it added and removed, and every update of the model that was refused.
 */
export async function runPreferences(options: PreferencesCommandOptions): Promise<number> {
  const names = options.which ? [options.which] : Object.keys(preferenceProfiles);
  const unknown = names.find((n) => !(n in preferenceProfiles));
  if (unknown !== undefined) {
    return fail(
      options.stderr,
      'TROUPE_CONFIG_INVALID',
      `No preferences named ${terminalText(JSON.stringify(unknown))}; use one of: ${Object.keys(preferenceProfiles).join(', ')}.`,
    );
  }
  let agentSettings: EmailAgentSettings;
  try {
    agentSettings = emailAgentSettingsFromEnv(options.env, options.env.TROUPE_EMAIL_USER?.trim() || 'Sam');
  } catch (error) {
    if (!isTroupeError(error)) throw error;
    return fail(options.stderr, error.code, error.message);
  }
  let store: TroupeStore;
  try {
    const logger = createLogger({ level: logLevelFromEnv(options.env, 'warn') });
    store = await openDefaultStore(options.env, { logger });
  } catch (error) {
    if (!isTroupeError(error)) throw error;
    return fail(options.stderr, error.code, error.message);
  }
  const out = (line: string) => options.stdout(`${terminalText(line)}\n`);
  try {
    if (!options.which) {
      // Set, not learned: who the user is, as triage and the agent read it.
      const from = agentSettings.backgroundFrom;
      const where = from === 'default' ? 'the default' : from === 'setting' ? 'set' : `from ${from.file}`;
      out(`background (TROUPE_EMAIL_BACKGROUND, ${where})`);
      for (const line of agentSettings.background.split('\n')) out(`    ${line}`);
      out('');
    }
    for (const name of names) {
      const namespace = preferenceProfiles[name as keyof typeof preferenceProfiles];
      const versions = await store.memory.history(namespace, PREFERENCES_KEY, options.history ? 1_000 : 1);
      const [latest] = versions;
      if (!latest) {
        out(
          `${name} (${namespace}): nothing learned yet (the default is written the first time it is read).`,
        );
        continue;
      }
      out(`${name} (${namespace}), version ${latest.version} — ${describeVersion(latest)}`);
      for (const line of textOf(latest.value).split('\n')) out(`    ${line}`);
      if (!options.history) {
        // An update refused since this version was written is worth knowing without --history.
        const [refused] = await readRefusals(store.memory, namespace, 1);
        if (refused && refused.value.kept === latest.version)
          out(`  ${describeRefusal(refused)} (troupe preferences ${name} --history lists every one)`);
      }
      if (options.history) {
        // A refused update is listed just above the version it kept (newest first).
        const refusals = await readRefusals(store.memory, namespace);
        const listed = new Set(versions.map((v) => v.version));
        const refusalsOf = (kept?: number) => {
          for (const refusal of refusals)
            if (kept === undefined ? !listed.has(refusal.value.kept) : refusal.value.kept === kept)
              out(`  ${describeRefusal(refusal)}`);
        };
        for (const [i, version] of versions.entries()) {
          refusalsOf(version.version);
          const older = versions[i + 1];
          out(`  v${version.version} — ${describeVersion(version)}`);
          if (!older) continue;
          const [added, removed] = changes(textOf(older.value), textOf(version.value));
          for (const line of removed) out(`      - ${line}`);
          for (const line of added) out(`      + ${line}`);
          if (added.length + removed.length === 0) out('      (no line changed)');
        }
        refusalsOf();
      }
      out('');
    }
    return 0;
  } finally {
    await store.close();
  }
}

function describeVersion(record: MemoryRecord): string {
  return `${when(record.at)}, ${record.source ?? 'written directly'}`;
}

/** `refused 2026-11-25 09:00 UTC: moved 3 lines from Ignore to Respond (inbox e1#2); v4 kept`. */
function describeRefusal(record: MemoryRecord<MemoryRefusal>): string {
  const { reason, kept, origin, kind } = record.value;
  const what = kind === 'compaction' ? 'the model’s compaction' : 'the model’s update';
  return `refused ${when(record.at)}: ${what} ${reason}${origin ? ` (${origin})` : ''}; v${kept} kept`;
}

function when(at: number): string {
  return `${new Date(at).toISOString().replace('T', ' ').slice(0, 16)} UTC`;
}

/** A profile as text: triage preferences are `{ instructions, rules }`, the others text. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const { instructions, rules } = value as { instructions?: unknown; rules?: unknown };
    const text = typeof instructions === 'string' ? instructions : '';
    return rules && Object.keys(rules).length > 0 ? `${text}\nRules: ${JSON.stringify(rules)}` : text;
  }
  return JSON.stringify(value);
}

/** Lines in `after` and not in `before`, and the other way round. */
function changes(before: string, after: string): [string[], string[]] {
  const a = new Set(before.split('\n'));
  const b = new Set(after.split('\n'));
  return [[...b].filter((l) => l.trim() && !a.has(l)), [...a].filter((l) => l.trim() && !b.has(l))];
}
