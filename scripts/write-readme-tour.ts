// Rewrites the tour excerpt in README.md from what `troupe tour` prints now (a test checks it is current).
import { readFileSync, writeFileSync } from 'node:fs';
import { renderReadmeTour, withTour } from './readmeTour.js';

const readme = new URL('../README.md', import.meta.url);
writeFileSync(readme, withTour(readFileSync(readme, 'utf8'), await renderReadmeTour()));
