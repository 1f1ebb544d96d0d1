import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnyStateMachine } from 'xstate';
import { z } from 'zod';
import {
  type ChartFormat,
  chartExtensions,
  chartFormats,
  renderStatechart,
} from '../inspect/renderStatechart.js';
import { exportStatechart } from '../inspect/statechartModel.js';
import { avatarPresenceMachine } from '../machines/avatarPresence.machine.js';
import { conversationThreadMachine } from '../machines/conversationThread.machine.js';
import { createRecordMachine } from '../machines/createRecord.machine.js';
import { emailLifecycleMachine } from '../machines/emailLifecycle.machine.js';
import { pendingChoiceMachine } from '../machines/pendingChoice.machine.js';
import { chartErrorCodes } from '../ports/errorCodes.js';
import { describe, TroupeError } from '../ports/troupeError.js';
import { fail } from './fail.js';

/** Troupe's own machines, as `troupe charts` exports them (file names are the machine ids). */
export const troupeMachines: readonly AnyStateMachine[] = [
  conversationThreadMachine,
  avatarPresenceMachine,
  pendingChoiceMachine,
  emailLifecycleMachine,
  createRecordMachine,
];

/** What `troupe charts` was asked for. */
export interface ChartsOptions {
  format: string;
  /** Directory to write one file per machine into; without it, charts go to stdout (SVG: to ./charts). */
  out?: string;
  /** A module whose XState machines to export instead of Troupe's. */
  module?: string;
  /** Only these exports of the module. */
  exports?: readonly string[];
  /** Where relative paths start (the process's working directory). */
  cwd: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const formatSchema = z.enum(chartFormats);

const invalid = (message: string, details?: Record<string, unknown>) =>
  new TroupeError(chartErrorCodes.invalid, message, details ? { details } : {});

/**
 * Whether a value is an XState v5 state machine (made by `createMachine` or `setup().createMachine`).
 * Checked by shape, not `instanceof`, so machines built with the user's own copy of xstate count.
 */
export function isStateMachine(value: unknown): value is AnyStateMachine {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as { __xstatenode?: unknown; root?: unknown; id?: unknown; transition?: unknown };
  return (
    m.__xstatenode === true &&
    typeof m.id === 'string' &&
    typeof m.root === 'object' &&
    typeof m.transition === 'function'
  );
}

/** A machine to chart, and the name its file gets. */
export interface NamedMachine {
  name: string;
  machine: AnyStateMachine;
}

/**
 * Loads a user's module and picks its state machines: the named exports, or every export that is
 * one. A default export is named after its machine's id. Throws `TROUPE_CHARTS_INVALID` when the
 * module cannot be loaded, has none, or a named export is missing or not a machine.
 */
export async function machinesOfModule(
  modulePath: string,
  names: readonly string[],
  cwd: string,
): Promise<NamedMachine[]> {
  const file = resolve(cwd, modulePath);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    throw invalid(`cannot load the module ${JSON.stringify(modulePath)} (${file}): ${describe(error)}`, {
      module: file,
    });
  }
  const nameOf = (key: string, machine: AnyStateMachine) => (key === 'default' ? machine.id : key);
  if (names.length > 0) {
    return names.map((key) => {
      const value = mod[key];
      if (!isStateMachine(value)) {
        const found = Object.keys(mod).filter((k) => isStateMachine(mod[k]));
        throw invalid(
          `${JSON.stringify(key)} in ${modulePath} is ${value === undefined ? 'not exported' : 'not an XState state machine'}; ` +
            `its machines: ${found.length > 0 ? found.join(', ') : 'none'}`,
          { module: file, export: key },
        );
      }
      return { name: nameOf(key, value), machine: value };
    });
  }
  const found = Object.entries(mod).flatMap(([key, value]) =>
    isStateMachine(value) ? [{ name: nameOf(key, value), machine: value }] : [],
  );
  if (found.length === 0) {
    throw invalid(
      `${modulePath} exports no XState state machine (exports: ${Object.keys(mod).join(', ') || 'none'}); ` +
        'export the value createMachine() or setup().createMachine() returns',
      { module: file },
    );
  }
  return found;
}

/** A line naming the machine, written as a comment of the format (JSON stdout is one document instead). */
const labelLine = (format: Exclude<ChartFormat, 'json' | 'svg'>, name: string) =>
  format === 'mermaid'
    ? `%% ── ${name} ──\n`
    : format === 'dot'
      ? `// ── ${name} ──\n`
      : `<!-- ── ${name} ── -->\n`;

/**
 * `troupe charts`: every machine's chart in one format, one file per machine in `out`, or on
 * stdout labelled one by one (JSON: one document, `{ machines: [...] }`). Returns the exit code.
 */
export async function runCharts(options: ChartsOptions): Promise<number> {
  try {
    const format = formatSchema.safeParse(options.format);
    if (!format.success) {
      throw invalid(
        `unknown chart format ${JSON.stringify(options.format)}; formats: ${chartFormats.join(', ')}`,
        { format: options.format },
      );
    }
    if (options.exports && options.exports.length > 0 && options.module === undefined) {
      throw invalid('--export names exports of a module: give the module with --module path/to/file.js');
    }
    const machines =
      options.module !== undefined
        ? await machinesOfModule(options.module, options.exports ?? [], options.cwd)
        : troupeMachines.map((machine) => ({ name: machine.id, machine }));
    const charts = machines.map(({ name, machine }) => ({ name, chart: exportStatechart(machine) }));
    const out = options.out ?? (format.data === 'svg' ? 'charts' : undefined);
    if (out !== undefined) {
      const dir = resolve(options.cwd, out);
      await mkdir(dir, { recursive: true });
      for (const { name, chart } of charts) {
        const file = join(dir, `${name}.${chartExtensions[format.data]}`);
        await writeFile(file, await renderStatechart(chart, format.data));
        options.stdout(`${file}\n`);
      }
      return 0;
    }
    if (format.data === 'json') {
      const doc = { machines: charts.map(({ name, chart }) => ({ name, chart })) };
      options.stdout(`${JSON.stringify(doc, null, 2)}\n`);
      return 0;
    }
    // SVG always has a directory (./charts by default), so what is left is a text format.
    const textFormat = format.data as Exclude<ChartFormat, 'json' | 'svg'>;
    options.stdout(
      (
        await Promise.all(
          charts.map(
            async ({ name, chart }) =>
              labelLine(textFormat, name) + (await renderStatechart(chart, textFormat)),
          ),
        )
      ).join('\n'),
    );
    return 0;
  } catch (error) {
    if (!TroupeError.isInstance(error) || error.code !== chartErrorCodes.invalid) throw error;
    return fail(options.stderr, error.code, error.message);
  }
}
