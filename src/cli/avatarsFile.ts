import { readFile } from 'node:fs/promises';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import {
  type AvatarDefinition,
  avatarDefinitionSchema,
  avatarListSchema,
} from '../actors/avatarDefinition.js';
import { TroupeError } from '../ports/troupeError.js';
import { formatPath } from '../simulator/scenario.js';
import { aliasLimitProblem, MAX_YAML_ALIAS_COUNT } from '../simulator/yamlAliases.js';

/** One thing wrong with an avatars file: where (`avatars[1].name`), on which line if known, and what. */
export interface AvatarsFileProblem {
  path: string;
  line?: number;
  message: string;
}

// Unknown keys are reported (a misspelt `persona` would otherwise be dropped without a word);
// the list schema then checks what spans avatars, such as duplicate ids.
const fileSchema = z.strictObject({
  $schema: z.string().optional(),
  avatars: z
    .array(avatarDefinitionSchema.strict())
    .min(1, 'list at least one avatar')
    .superRefine((avatars, ctx) => {
      const list = avatarListSchema.safeParse(avatars);
      if (!list.success) for (const issue of list.error.issues) ctx.addIssue({ ...issue, code: 'custom' });
    }),
});

/**
 * Reads an avatars file: YAML or JSON, either `{ avatars: [...] }` or the bare list, each entry
 * an avatar definition (see `avatarDefinitionSchema`).
 *
 * @throws TroupeError `TROUPE_AVATARS_NOT_FOUND` when the file does not exist,
 *   `TROUPE_AVATARS_UNREADABLE` when it cannot be read, and `TROUPE_AVATARS_INVALID` when it does
 *   not parse or validate; the message names the file and every problem with its path and line,
 *   and `details.problems` lists them.
 */
export async function loadAvatarsFile(path: string): Promise<AvatarDefinition[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new TroupeError('TROUPE_AVATARS_NOT_FOUND', `No avatars file at ${path}.`, {
        details: { file: path },
      });
    }
    throw new TroupeError(
      'TROUPE_AVATARS_UNREADABLE',
      `Cannot read the avatars file ${path} (${code ?? 'error'}).`,
      {
        cause: error,
        details: { file: path },
      },
    );
  }
  return parseAvatarsText(text, path);
}

/** Parses and validates avatars file text (YAML or JSON); `file` is only used in messages. */
export function parseAvatarsText(text: string, file = '<avatars>'): AvatarDefinition[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true });
  if (doc.errors.length > 0) {
    throw invalid(
      file,
      doc.errors.map((e) => {
        const line = e.linePos?.[0]?.line;
        return {
          path: '',
          ...(line !== undefined ? { line } : {}),
          message: e.message.split('\n')[0] ?? e.message,
        };
      }),
    );
  }
  let raw: unknown;
  try {
    // Aliases are expanded here, under the same limit as scenario files (a "billion laughs" file).
    raw = doc.toJS({ maxAliasCount: MAX_YAML_ALIAS_COUNT });
  } catch (error) {
    const message = aliasLimitProblem(error) ?? (error instanceof Error ? error.message : String(error));
    throw invalid(file, [{ path: '', message: message.split('\n')[0] ?? message }]);
  }
  if (raw === null || raw === undefined) {
    throw invalid(file, [
      { path: '', message: 'the file is empty; expected `avatars:` with a list of avatars' },
    ]);
  }
  const wrapped = Array.isArray(raw) ? { avatars: raw } : raw;
  const base = Array.isArray(raw) ? [] : ['avatars'];
  const result = fileSchema.safeParse(wrapped);
  if (result.success) return result.data.avatars;

  const lineOf = (path: readonly PropertyKey[]): number | undefined => {
    // The node at the path, or (for a missing key) the nearest one above it.
    const docPath = Array.isArray(raw) ? path.slice(1) : path;
    for (let n = docPath.length; n >= 0; n -= 1) {
      const node = n === 0 ? doc.contents : doc.getIn(docPath.slice(0, n) as (string | number)[], true);
      const range = (node as { range?: [number, number, number] } | undefined)?.range;
      if (range) return lineCounter.linePos(range[0]).line;
    }
    return undefined;
  };
  const problems = result.error.issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path : base;
    const line = lineOf(path);
    const message =
      issue.code === 'unrecognized_keys'
        ? `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`
        : issue.code === 'invalid_type' && issue.message.endsWith('received undefined')
          ? `required (${issue.expected})`
          : issue.message;
    const shown = Array.isArray(raw) && path[0] === 'avatars' ? path.slice(1) : path;
    return { path: formatPath(shown), ...(line !== undefined ? { line } : {}), message };
  });
  // The list's own check parses every avatar again, so a problem it finds too is said once.
  const said = new Set<string>();
  throw invalid(
    file,
    problems.filter((p) => {
      const key = `${p.path}\u0000${p.message}`;
      if (said.has(key)) return false;
      said.add(key);
      return true;
    }),
  );
}

function invalid(file: string, problems: AvatarsFileProblem[]): TroupeError {
  const lines = problems.map((p) => {
    const where = [p.path, p.line !== undefined ? `(line ${p.line})` : ''].filter(Boolean).join(' ');
    return `  ${where ? `${where}: ` : ''}${p.message}`;
  });
  return new TroupeError(
    'TROUPE_AVATARS_INVALID',
    `The avatars file ${file} is invalid:\n${lines.join('\n')}`,
    {
      details: { file, problems },
    },
  );
}
