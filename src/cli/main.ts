/** Entry point of the `troupe` command; everything else lives in program.ts. */
import { runCli } from './program.js';

process.exitCode = await runCli(process.argv.slice(2));
