/** Where the CLI writes and what it reads from its surroundings; tests pass their own. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** Whether stdout is a terminal (ANSI dim is used only then). */
  isTTY: boolean;
  /** Where relative paths of `troupe charts` start. Default: process.cwd(). */
  cwd?: string;
  /** Where `troupe chat` reads lines from. Default: process.stdin. */
  stdin?: NodeJS.ReadableStream;
  /**
   * Resolves with the signal's name when the process is asked to stop; `troupe discord` runs
   * until then. Default: the first SIGINT or SIGTERM.
   */
  stopSignal?: () => Promise<string>;
}

/** The real process: its streams, environment, and the first SIGINT or SIGTERM. */
export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    env: process.env,
    isTTY: process.stdout.isTTY === true,
    stdin: process.stdin,
    stopSignal: () =>
      new Promise<string>((resolve) => {
        const stop = (signal: NodeJS.Signals) => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve(signal);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      }),
  };
}
