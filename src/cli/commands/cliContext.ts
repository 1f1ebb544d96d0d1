import { fileURLToPath } from 'node:url';
import { ConfigError } from '../../config/configError.js';
import type { CoordinationConfig } from '../../config/coordinationConfig.js';
import { loadCoordinationConfig } from '../../config/coordinationFromEnv.js';
import { terminalText } from '../../delivery/terminalText.js';
import { loadScenarioFile, type Scenario, ScenarioError } from '../../simulator/scenario.js';
import type { CliIo } from '../cliIo.js';
import { EXIT_BAD_INPUT, EXIT_OK } from '../exitCodes.js';
import { fail } from '../fail.js';

// Works from src/cli/commands (tsx) and from dist/cli/commands (built): both sit three levels
// under the package root.
const examplesDir = new URL('../../../examples/', import.meta.url);

/** What every command's action shares within one run of the CLI. */
export interface CliContext {
  readonly io: CliIo;
  /** The arguments the CLI was run with (after the program name). */
  readonly argv: readonly string[];
  /** Writes to io.stderr with terminal controls made harmless. */
  readonly stderr: (text: string) => void;
  /** Whether output may carry ANSI colour (a terminal without NO_COLOR, or FORCE_COLOR set). */
  readonly useColor: boolean;
  /** What the run exits with once the command's action is done; actions set it. */
  exitCode: number;
  /** The coordination settings from the environment; on bad ones, reports them and sets exitCode. */
  baseConfig(): CoordinationConfig | undefined;
  /** Reads a scenario file; on a bad one, reports it and sets exitCode. */
  loadScenario(file: string): Promise<Scenario | undefined>;
  /** Resolves when the process is asked to stop (never, without io.stopSignal). */
  stopSignal(): Promise<string>;
  /** The absolute path of a file under the package's examples/ folder. */
  examplesPath(file: string): string;
  /** The package's examples/ folder. */
  readonly examplesDir: URL;
}

export function createCliContext(argv: readonly string[], io: CliIo): CliContext {
  // Errors quote what came from outside (a file's keys and values, an environment variable, a
  // path), and JSON quoting leaves 8-bit controls in place: none of it may drive the terminal.
  const stderr = (text: string) => io.stderr(terminalText(text));
  const context: CliContext = {
    io,
    argv,
    stderr,
    useColor: (io.isTTY && io.env.NO_COLOR === undefined) || (io.env.FORCE_COLOR ?? '0') !== '0',
    exitCode: EXIT_OK,
    baseConfig: () => {
      try {
        return loadCoordinationConfig(io.env);
      } catch (error) {
        if (!ConfigError.isInstance(error)) throw error;
        context.exitCode = fail(stderr, error.code, error.message);
        return undefined;
      }
    },
    loadScenario: async (file) => {
      try {
        return await loadScenarioFile(file);
      } catch (error) {
        if (!ScenarioError.isInstance(error)) throw error;
        stderr(`error ${error.message}\n`);
        context.exitCode = EXIT_BAD_INPUT;
        return undefined;
      }
    },
    stopSignal: () => io.stopSignal?.() ?? new Promise<string>(() => undefined),
    examplesPath: (file) => fileURLToPath(new URL(file, examplesDir)),
    examplesDir,
  };
  return context;
}
