/** Entry point of the `troupe` command; everything else lives in program.ts. */
import { runCli } from './program.js';

process.exitCode = await runCli(process.argv.slice(2));
// Run as a forked child (a discord.js shard), the IPC channel would keep the process alive.
if (process.connected) process.disconnect();
