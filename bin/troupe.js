#!/usr/bin/env node
// One CLI, one code path per install: in a checkout (src/ beside bin/, tsx installed) it runs the
// sources, so `npx troupe`, `npm start` and the other npm scripts always run the code as it is now;
// an installed package (no src/) runs the compiled dist/.
import { existsSync } from 'node:fs';

const sources = new URL('../src/cli/main.ts', import.meta.url);

async function tsxRegister() {
  try {
    return (await import('tsx/esm/api')).register;
  } catch {
    return undefined;
  }
}

const register = existsSync(sources) ? await tsxRegister() : undefined;
if (register) {
  register();
  await import(sources.href);
} else {
  await import('../dist/cli/main.js');
}
