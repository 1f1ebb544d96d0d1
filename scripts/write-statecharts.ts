// Regenerates docs/statecharts.md from the machines (a test checks it is current).
import { writeFileSync } from 'node:fs';
import { renderStatechartsDoc } from '../src/inspect/statechartsDoc.js';

writeFileSync(new URL('../docs/statecharts.md', import.meta.url), renderStatechartsDoc());
