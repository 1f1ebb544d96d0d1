/** Entry point of the `troupe` command; everything else lives in program.ts. */
import { runCli } from './program.js';

// A reader that stops early (`troupe simulate x.yaml | head`) closes the pipe: that ends the
// command quietly, as it does for any Unix tool, instead of an unhandled EPIPE.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

process.exitCode = await runCli(process.argv.slice(2));
// Run as a forked child (a discord.js shard), the IPC channel would keep the process alive.
if (process.connected) process.disconnect();
