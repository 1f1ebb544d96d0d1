// Prints the README's configuration tables; with --write, rewrites them in README.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { renderConfigTables, withConfigTables } from './configTables.js';

const tables = renderConfigTables();
if (process.argv.includes('--write')) {
  const readme = new URL('../README.md', import.meta.url);
  writeFileSync(readme, withConfigTables(readFileSync(readme, 'utf8'), tables));
} else process.stdout.write(`${tables}\n`);
