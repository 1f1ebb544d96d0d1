/**
 * Runs the benchmarks on the built output: `node --import ./bench/support/register.mjs bench/x.ts`.
 *
 * The benchmark files (bench/, and the test/support helpers they use) are TypeScript, compiled on
 * load by TypeScript's own transpiler; every import of Troupe's sources (src/) is served from dist/,
 * the JavaScript `npm run build` emits and users run. Nothing runs through tsx: its esbuild
 * `keepNames` wraps named closures in `__name(...)` calls, which would be timed in hot paths.
 * See distHooks.mjs for the rules; the modules served from dist/ are counted in
 * `globalThis[Symbol.for('troupe.bench.distModules')]` (a Set of URLs) for the summary line.
 */
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const { port1, port2 } = new MessageChannel();
/** @type {Set<string>} */
const distModules = new Set();
port1.on('message', (url) => distModules.add(String(url)));
port1.unref();
globalThis[Symbol.for('troupe.bench.distModules')] = distModules;
register('./distHooks.mjs', { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });
