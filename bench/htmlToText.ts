/**
 * HTML to text: how long the email assistant takes to read hostile HTML bodies (unclosed tags,
 * `<` without `>`, blank runs, deep nesting, unclosed `<script`) and a newsletter, at 100 KB and
 * 2 MB each. Each body is converted a few times; the slowest and the median run are printed
 * (wall-clock, and the CPU time of this process, which other processes on a busy machine inflate
 * less), with the length of the text. Prints figures; never asserts.
 *
 *   npm run bench:html
 *   npm run bench:html -- --runs 5 --sizes 100000,2000000
 *   npm run bench:html -- --quick          # one run at 20 KB
 */
import { parseArgs } from 'node:util';
import { htmlToText } from '../src/email/htmlText.js';
import { hostileHtmlBodies } from '../test/support/hostileHtml.js';
import { printSummary } from './support/summary.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string' },
    sizes: { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
});
const runs = Math.max(1, Number(values.runs ?? (values.quick ? 1 : 3)));
const sizes = (values.sizes ?? (values.quick ? '20000' : '100000,2000000')).split(',').map(Number);
/** The slowest body's median CPU time at each size (the summary figure). */
const slowest = new Map<number, { name: string; ms: number }>();

htmlToText(hostileHtmlBodies(10_000).newsletter ?? ''); // load the converter before timing
/** Slowest / median, in ms. */
function figures(times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  return `${(sorted.at(-1) ?? 0).toFixed(1).padStart(6)} / ${median.toFixed(1).padStart(6)} ms`;
}

console.log(`html → text, ${runs} runs per body (slowest / median, text length)`);
for (const size of sizes) {
  console.log(`\n${(size / 1000).toLocaleString('en')} KB bodies`);
  for (const [name, html] of Object.entries(hostileHtmlBodies(size))) {
    const wall: number[] = [];
    const cpu: number[] = [];
    let text = '';
    for (let run = 0; run < runs; run += 1) {
      const startCpu = process.cpuUsage();
      const start = performance.now();
      text = htmlToText(html);
      wall.push(performance.now() - start);
      const used = process.cpuUsage(startCpu);
      cpu.push((used.user + used.system) / 1000);
    }
    const medianCpu = [...cpu].sort((a, b) => a - b)[Math.floor(cpu.length / 2)] ?? 0;
    if (medianCpu > (slowest.get(size)?.ms ?? -1)) slowest.set(size, { name, ms: medianCpu });
    console.log(
      `  ${name.padEnd(28)} wall ${figures(wall)}   cpu ${figures(cpu)}   ${String(text.length).padStart(7)} chars`,
    );
  }
}
printSummary(
  'html',
  [...slowest].map(([size, { name, ms }]) => ({
    name: `slowest body at ${(size / 1000).toLocaleString('en')} KB (${name}), CPU median`,
    value: ms,
    unit: 'ms',
  })),
);
