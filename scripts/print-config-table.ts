// Prints the README's configuration table from the single source of truth.
import { coordinationSettings } from '../src/config/coordinationConfig.js';

const fmt = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
const lines = ['| Variable | Default | What it does |', '| --- | --- | --- |'];
for (const [name, s] of Object.entries(coordinationSettings))
  lines.push(`| \`${name}\` | \`${fmt(s.default)}\` | ${s.doc} |`);
process.stdout.write(`${lines.join('\n')}\n`);
