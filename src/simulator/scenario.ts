import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ambiguousNames, avatarEmojiSchema, avatarNameSchema } from '../actors/avatarNames.js';
import {
  type CoordinationConfig,
  type CoordinationVariable,
  coordinationSettings,
} from '../config/coordinationConfig.js';
import { durationSchema } from '../config/duration.js';
import { modelChoiceSchema } from '../config/modelChoice.js';
import type { ScenarioErrorCode } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';
import { aliasLimitProblem, MAX_YAML_ALIAS_COUNT } from './yamlAliases.js';

type Settings = typeof coordinationSettings;

const idSchema = z
  .string()
  .regex(/^[\p{L}\p{N}][\p{L}\p{N}_.-]*$/u, 'an id: letters, digits, "_", "." or "-", no spaces or ":"');

const avatarSchema = z
  .strictObject({
    id: idSchema.meta({
      description: 'Stable avatar id; platform mentions, `summon:` and `replyTo: last:<id>` use it.',
    }),
    name: avatarNameSchema.meta({ description: 'Display name; messages address the avatar by it.' }),
    emoji: avatarEmojiSchema
      .optional()
      .meta({ description: 'Emoji shown in the transcript; it also addresses the avatar.' }),
    aliases: z.array(avatarNameSchema).optional().meta({ description: 'Other names the avatar answers to.' }),
    persona: z
      .string()
      .optional()
      .meta({ description: 'A sentence of persona; the offline replies draw on it.' }),
    topics: z
      .array(z.string().trim().min(1))
      .optional()
      .meta({ description: 'What the avatar likes to talk about.' }),
    present: z
      .boolean()
      .default(false)
      .meta({ description: 'In the channel from the start (otherwise summon or join it).' }),
    model: modelChoiceSchema.optional().meta({
      description:
        "The model for this avatar's turns, as in an avatars file: `provider:model` (e.g. `openai:gpt-4o-mini`), `offline`, or a profile of `TROUPE_MODEL_PROFILES`; without it, the default model. `troupe simulate` refuses an unknown provider or profile at start and plays every turn with the offline scripted model.",
    }),
    tools: z
      .array(z.enum(['entity_lookup']))
      .optional()
      .meta({
        description:
          'Tools the avatar may use. `entity_lookup` answers lookups from the business database when played through the runtime (`troupe tour`); the simulator answers with offline lines.',
      }),
  })
  .meta({ description: 'An avatar in the roster.' });

const humanSchema = z
  .strictObject({
    id: idSchema,
    name: z.string().trim().min(1),
  })
  .meta({ description: 'A person in the channel.' });

const timing = {
  at: durationSchema.optional().meta({ description: 'Absolute time since the start of the scenario.' }),
  after: durationSchema.optional().meta({ description: 'Time after the previous step (default 0).' }),
};

const sayFields = {
  say: z.string().min(1).meta({ description: 'The message text; avatar names in it are found as mentions.' }),
  replyTo: z.string().optional().meta({
    description:
      'Reply to a message: `last` (latest message), `last:<id>` (latest by that avatar or human) or the `label` of an earlier step.',
  }),
  mentions: z.array(idSchema).optional().meta({
    description: 'Avatar ids mentioned the platform way (like Discord `<@id>`), besides names in the text.',
  }),
  label: idSchema
    .optional()
    .meta({ description: 'A name for this message, so later steps can `replyTo` it.' }),
};

const humanSayStep = z
  .strictObject({
    ...timing,
    human: idSchema.meta({ description: 'Id of the human speaking.' }),
    ...sayFields,
  })
  .meta({ title: 'human says', description: 'A human posts a message.' });
const avatarSayStep = z
  .strictObject({
    ...timing,
    avatar: idSchema.meta({ description: 'Id of the avatar speaking.' }),
    ...sayFields,
  })
  .meta({
    title: 'avatar says',
    description: 'An avatar posts a scripted message on its own (no turn claimed).',
  });
const summonStep = z
  .strictObject({
    ...timing,
    summon: idSchema.meta({ description: 'Id of the avatar to summon.' }),
    by: idSchema.meta({ description: 'Id of the human who summons it.' }),
  })
  .meta({ title: 'summon', description: 'A human summons an avatar: greeting, then a proactive follow-up.' });
const dismissStep = z
  .strictObject({ ...timing, dismiss: idSchema.meta({ description: 'Id of the avatar to dismiss.' }) })
  .meta({ title: 'dismiss', description: 'An avatar leaves the channel.' });
const joinStep = z
  .strictObject({ ...timing, join: idSchema.meta({ description: 'Id of the avatar that joins.' }) })
  .meta({ title: 'join', description: 'An avatar enters the channel without being summoned.' });
const waitStep = z
  .strictObject({ wait: durationSchema.meta({ description: 'How long to let pass before the next step.' }) })
  .meta({ title: 'wait', description: 'Let simulated time pass (threads expire, follow-ups fire).' });

const narrateStep = z
  .strictObject({ ...timing, narrate: z.string().min(1).meta({ description: 'Text to print.' }) })
  .meta({ title: 'narrate', description: 'A line of narration in the transcript; the floor never sees it.' });

/** The key that says what a step does, in the order of the step union's options. */
const STEP_ACTIONS = ['human', 'avatar', 'summon', 'dismiss', 'join', 'wait', 'narrate'] as const;

const stepSchema = z.union([
  humanSayStep,
  avatarSayStep,
  summonStep,
  dismissStep,
  joinStep,
  waitStep,
  narrateStep,
]);

const failureSchema = z
  .strictObject({
    avatar: idSchema.meta({ description: 'Id of the avatar whose turn fails.' }),
    nth: z
      .number()
      .int()
      .min(1)
      .meta({ description: "Which of the avatar's claimed turns fails (1 = its first)." }),
    stage: z
      .enum(['generation', 'delivery'])
      .default('generation')
      .meta({ description: 'Fail while generating (no text) or after generation, at delivery.' }),
    reason: z.string().optional().meta({ description: 'Shown in the transcript.' }),
  })
  .meta({ description: 'Make one claimed turn fail, to show the floor releasing its claim.' });

type ConfigShape = { [K in CoordinationVariable]: z.ZodOptional<Settings[K]['schema']> };
const configShape = Object.fromEntries(
  Object.entries(coordinationSettings).map(([variable, setting]) => [
    variable,
    setting.schema
      .optional()
      .meta({ description: `${setting.doc} Default: ${JSON.stringify(setting.default)}.` }),
  ]),
) as unknown as ConfigShape;

const configSchema = z.strictObject(configShape).meta({
  description:
    'Coordination overrides keyed by environment variable name, applied on top of the environment.',
});

/** The scenario file schema (JSON or YAML). Durations become milliseconds once parsed. */
export const scenarioSchema = z
  .strictObject({
    $schema: z.string().optional().meta({ description: 'Path or URL of this JSON Schema, for editors.' }),
    name: z.string().trim().min(1).meta({ description: 'Short name of the scenario.' }),
    description: z.string().optional().meta({ description: 'What the scenario shows.' }),
    channel: idSchema.default('general').meta({ description: 'Channel id (default "general").' }),
    config: configSchema.optional(),
    generationLatency: durationSchema
      .default(1500)
      .meta({ description: 'Simulated time from a claimed turn to its delivery (default 1500ms).' }),
    avatars: z
      .array(avatarSchema)
      .min(1)
      .meta({ description: 'The roster: every avatar the channel knows.' }),
    humans: z.array(humanSchema).default([]).meta({ description: 'The people who speak in the script.' }),
    script: z.array(stepSchema).min(1).meta({ description: 'Steps, run in order at their times.' }),
    failures: z.array(failureSchema).default([]).meta({ description: 'Turns that fail on purpose.' }),
  })
  .superRefine((scenario, ctx) => {
    const problem = (path: (string | number)[], message: string) =>
      ctx.addIssue({ code: 'custom', path, message });

    const avatarIds = new Set<string>();
    const humanIds = new Set<string>();
    scenario.avatars.forEach((avatar, i) => {
      if (avatarIds.has(avatar.id)) problem(['avatars', i, 'id'], `avatar id "${avatar.id}" is used twice`);
      avatarIds.add(avatar.id);
    });
    for (const ambiguous of ambiguousNames(scenario.avatars))
      problem(['avatars', ambiguous.index, ...ambiguous.field], ambiguous.message);
    scenario.humans.forEach((human, i) => {
      if (humanIds.has(human.id) || avatarIds.has(human.id)) {
        problem(['humans', i, 'id'], `id "${human.id}" is already used by another avatar or human`);
      }
      humanIds.add(human.id);
    });

    const knownAvatar = (id: string, path: (string | number)[]) => {
      if (!avatarIds.has(id))
        problem(path, `no avatar with id "${id}" (avatars: ${[...avatarIds].join(', ')})`);
    };
    const knownHuman = (id: string, path: (string | number)[]) => {
      if (!humanIds.has(id)) {
        problem(path, `no human with id "${id}" (humans: ${[...humanIds].join(', ') || 'none declared'})`);
      }
    };

    const labels = new Set<string>();
    let time = 0;
    scenario.script.forEach((step, i) => {
      const at = ['script', i];
      if ('wait' in step) {
        time += step.wait;
        return;
      }
      if (step.at !== undefined && step.after !== undefined) {
        problem(at, 'give either `at` (absolute) or `after` (relative), not both');
      } else if (step.at !== undefined) {
        if (step.at < time)
          problem([...at, 'at'], `goes back in time: the previous step is already at ${time}ms`);
        time = step.at;
      } else {
        time += step.after ?? 0;
      }
      if ('summon' in step) {
        knownAvatar(step.summon, [...at, 'summon']);
        knownHuman(step.by, [...at, 'by']);
      } else if ('dismiss' in step) {
        knownAvatar(step.dismiss, [...at, 'dismiss']);
      } else if ('join' in step) {
        knownAvatar(step.join, [...at, 'join']);
      } else if ('narrate' in step) {
        // nothing to check
      } else {
        if ('human' in step) knownHuman(step.human, [...at, 'human']);
        else knownAvatar(step.avatar, [...at, 'avatar']);
        for (const [j, id] of (step.mentions ?? []).entries()) knownAvatar(id, [...at, 'mentions', j]);
        if (step.replyTo !== undefined) {
          const ref = step.replyTo;
          const target = ref.startsWith('last:') ? ref.slice('last:'.length) : undefined;
          if (target !== undefined) {
            if (!avatarIds.has(target) && !humanIds.has(target)) {
              problem([...at, 'replyTo'], `"${target}" is neither an avatar nor a human id`);
            }
          } else if (ref !== 'last' && !labels.has(ref)) {
            problem(
              [...at, 'replyTo'],
              `"${ref}" is not \`last\`, \`last:<id>\` or the label of an earlier step`,
            );
          }
        }
        if (step.label !== undefined) {
          if (labels.has(step.label)) problem([...at, 'label'], `label "${step.label}" is used twice`);
          labels.add(step.label);
        }
      }
    });

    for (const [i, failure] of scenario.failures.entries())
      knownAvatar(failure.avatar, ['failures', i, 'avatar']);
  })
  .meta({
    title: 'Troupe scenario',
    description:
      'A scripted channel for `troupe simulate`: avatars, humans, a timed script and optional failures.',
  });

/** A parsed scenario: durations are milliseconds and defaults are filled in. */
export type Scenario = z.output<typeof scenarioSchema>;
/** A scenario as written by hand (durations may be strings such as `3s`). */
export type ScenarioInput = z.input<typeof scenarioSchema>;
/** One step of a parsed script. */
export type ScriptStep = Scenario['script'][number];
/** One scripted turn failure. */
export type ScenarioFailure = Scenario['failures'][number];
/** One avatar of a parsed scenario. */
export type ScenarioAvatar = Scenario['avatars'][number];

/** One thing wrong with a scenario: where (a path such as `script[2].after`) and what. */
export interface ScenarioProblem {
  path: string;
  message: string;
}

export type { ScenarioErrorCode };

const SCENARIO_ERROR = Symbol.for('troupe.error.scenario');

/**
 * A scenario file that cannot be used: unreadable, not YAML/JSON, or not a valid scenario.
 * The message names the file and every problem with its path, so it can be fixed in one go.
 */
export class ScenarioError extends TroupeError {
  declare readonly code: ScenarioErrorCode;
  readonly file: string | undefined;
  readonly problems: readonly ScenarioProblem[];

  constructor(code: ScenarioErrorCode, file: string | undefined, problems: readonly ScenarioProblem[]) {
    const where = file ?? '<scenario>';
    const lines = problems.map((p) => (p.path ? `  ${p.path}: ${p.message}` : `  ${p.message}`));
    super(code, `${code}: ${where}\n${lines.join('\n')}`, { details: { file: where } });
    this.name = 'ScenarioError';
    Object.defineProperty(this, SCENARIO_ERROR, { value: true });
    this.file = file;
    this.problems = problems;
  }

  /** True for a {@link ScenarioError} from any copy of Troupe. */
  static override isInstance(error: unknown): error is ScenarioError {
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as Record<symbol, unknown>)[SCENARIO_ERROR] === true
    );
  }
}

/** Formats a zod path the way people write it: `script[2].after`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

type Issue = z.core.$ZodIssue;

/** Turns zod issues into one problem per real mistake, choosing the step kind the author meant. */
function describeIssues(
  issues: readonly Issue[],
  input: unknown,
  base: readonly PropertyKey[] = [],
): ScenarioProblem[] {
  const out: ScenarioProblem[] = [];
  for (const issue of issues) {
    const path = [...base, ...issue.path];
    if (
      issue.code === 'invalid_union' &&
      path.length === 2 &&
      path[0] === 'script' &&
      typeof path[1] === 'number'
    ) {
      out.push(...describeStep(issue, input, path));
    } else if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((k) => `"${k}"`).join(', ');
      out.push({
        path: formatPath(path),
        message: `unknown field${issue.keys.length > 1 ? 's' : ''} ${keys}`,
      });
    } else if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) {
      out.push({ path: formatPath(path), message: `required (${issue.expected})` });
    } else {
      out.push({ path: formatPath(path), message: issue.message });
    }
  }
  return out;
}

function describeStep(issue: Extract<Issue, { code: 'invalid_union' }>, input: unknown, path: PropertyKey[]) {
  const step = valueAt(input, path);
  const at = formatPath(path);
  if (step === null || typeof step !== 'object' || Array.isArray(step)) {
    return [{ path: at, message: 'a step is a mapping such as { after: 2s, human: u1, say: "hello" }' }];
  }
  const actions = STEP_ACTIONS.filter((key) => key in step);
  if (actions.length === 0) {
    const message =
      'say' in step
        ? 'a `say` step needs `human: <id>` or `avatar: <id>` to say who speaks'
        : 'a step needs one action: `human` + `say`, `avatar` + `say`, `summon` (+ `by`), `dismiss`, `join`, `wait` or `narrate`';
    return [{ path: at, message }];
  }
  if (actions.length > 1) {
    return [
      {
        path: at,
        message: `a step does one thing, but this one has ${actions.map((a) => `\`${a}\``).join(' and ')}`,
      },
    ];
  }
  const branch = issue.errors[STEP_ACTIONS.indexOf(actions[0] as (typeof STEP_ACTIONS)[number])] ?? [];
  return describeIssues(branch, input, path);
}

/**
 * Validates an already-decoded scenario value (for example from `JSON.parse`).
 * Throws a {@link ScenarioError} with code `TROUPE_SCENARIO_INVALID` listing every problem.
 */
export function parseScenario(raw: unknown, file?: string): Scenario {
  const result = scenarioSchema.safeParse(raw);
  if (result.success) return result.data;
  throw new ScenarioError('TROUPE_SCENARIO_INVALID', file, describeIssues(result.error.issues, raw));
}

/**
 * Parses scenario text, YAML or JSON (YAML 1.2 reads both), then validates it.
 * Throws a {@link ScenarioError}: `TROUPE_SCENARIO_SYNTAX` for text that does not parse, with line
 * and column, or `TROUPE_SCENARIO_INVALID`.
 */
export function parseScenarioText(text: string, file?: string): Scenario {
  let raw: unknown;
  try {
    // logLevel 'error': the library's warnings (an unknown directive) would go to Node's process
    // warnings, printed on stderr with the file's line as is, escape sequences and all.
    raw = parseYaml(text, { prettyErrors: true, maxAliasCount: MAX_YAML_ALIAS_COUNT, logLevel: 'error' });
  } catch (error) {
    const message = aliasLimitProblem(error) ?? (error instanceof Error ? error.message : String(error));
    throw new ScenarioError('TROUPE_SCENARIO_SYNTAX', file, [
      { path: '', message: message.split('\n')[0] ?? message },
    ]);
  }
  return parseScenario(raw, file);
}

/** Reads and parses a scenario file; every failure is a {@link ScenarioError}. */
export async function loadScenarioFile(file: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String(error);
    throw new ScenarioError('TROUPE_SCENARIO_UNREADABLE', file, [{ path: '', message: reason }]);
  }
  return parseScenarioText(text, file);
}

/**
 * The scenario's `config` (environment variable names) as typed {@link CoordinationConfig} fields,
 * ready to lay over a base config.
 */
export function scenarioConfigOverrides(scenario: Scenario): Partial<CoordinationConfig> {
  const overrides: Record<string, unknown> = {};
  for (const [variable, value] of Object.entries(scenario.config ?? {})) {
    if (value === undefined) continue;
    overrides[coordinationSettings[variable as CoordinationVariable].key] = value;
  }
  return overrides as Partial<CoordinationConfig>;
}
