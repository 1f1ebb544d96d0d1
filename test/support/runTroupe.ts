import { type CliIo, runCli } from '../../src/cli/program.js';

/** What a CLI run printed, and its exit code. */
export interface TroupeRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the `troupe` command line in-process with `env` as its environment, capturing what it
 * prints. With `stopWhen`, a long-running command (`--watch`) is sent SIGINT once its output
 * matches.
 */
export async function runTroupe(
  args: string[],
  env: Record<string, string | undefined> = {},
  options: {
    stopWhen?: RegExp;
    isTTY?: boolean;
    /** Called with all the output so far after each write (to act on what a command prints). */
    onStdout?: (stdout: string) => void;
  } = {},
): Promise<TroupeRun> {
  let stdout = '';
  let stderr = '';
  let stop: (signal: string) => void = () => {};
  const stopped = new Promise<string>((resolve) => {
    stop = resolve;
  });
  const io: CliIo = {
    stdout: (t) => {
      stdout += t;
      if (options.stopWhen?.test(stdout)) stop('SIGINT');
      options.onStdout?.(stdout);
    },
    stderr: (t) => {
      stderr += t;
    },
    env,
    isTTY: options.isTTY ?? false,
    stopSignal: () => stopped,
  };
  const code = await runCli(args, io);
  return { code, stdout, stderr };
}
