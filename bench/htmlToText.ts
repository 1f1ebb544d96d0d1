/**
 * HTML to text: how long the email assistant takes to read hostile HTML bodies (unclosed tags,
 * `<` without `>`, blank runs, deep nesting, unclosed `<script`) and a newsletter, at 100 KB and
 * 2 MB each. Each body is converted a few times; the slowest and the median run are printed
 * (wall-clock, and the CPU time of this process, which other processes on a busy machine inflate
 * less), with the length of the text. Prints figures; never asserts.
 *
 *   npx tsx bench/htmlToText.ts
 *   npx tsx bench/htmlToText.ts --runs 5 --sizes 100000,2000000
 */
import { parseArgs } from 'node:util';
import { htmlToText } from '../src/email/htmlText.js';
import { hostileHtmlBodies } from '../test/support/hostileHtml.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '3' }, sizes: { type: 'string', default: '100000,2000000' } },
});
const runs = Math.max(1, Number(values.runs));
const sizes = values.sizes.split(',').map(Number);

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
    console.log(
      `  ${name.padEnd(28)} wall ${figures(wall)}   cpu ${figures(cpu)}   ${String(text.length).padStart(7)} chars`,
    );
  }
}
