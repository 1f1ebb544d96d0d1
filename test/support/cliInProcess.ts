import { Readable } from 'node:stream';
import { type CliIo, runCli } from '../../src/cli/program.js';

/** Runs `troupe chat` in-process, reading `lines` as standard input; `env` is all it sees. */
export async function chatInProcess(
  args: string[],
  lines: string[],
  env: Record<string, string | undefined>,
) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    env,
    isTTY: false,
    stdin: Readable.from(lines.map((l) => `${l}\n`)),
  };
  const code = await runCli(['chat', ...args], io);
  return { code, stdout, stderr };
}

/**
 * Runs `troupe discord` in-process (a memory store and silent logs unless `env` says otherwise)
 * until `stop()` resolves its stop signal.
 */
export function discordInProcess(args: string[], env: Record<string, string | undefined>) {
  let stdout = '';
  let stderr = '';
  let stop: (signal: string) => void = () => undefined;
  const stopped = new Promise<string>((resolve) => {
    stop = resolve;
  });
  const io: CliIo = {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env: { TROUPE_STORE: 'memory', LOG_LEVEL: 'silent', ...env },
    isTTY: false,
    stopSignal: () => stopped,
  };
  const code = runCli(['discord', ...args], io);
  return { code, stop, out: () => stdout, err: () => stderr };
}
