/**
 * HTML to text: how long the email assistant takes to read hostile HTML bodies (unclosed tags,
 * `<` without `>`, blank runs, deep nesting, unclosed `<script`) and a newsletter, at 100 KB and
 * 2 MB each. Each body is converted a few times; the slowest and the median run are printed,
 * with the length of the text. Prints figures; never asserts.
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
console.log(`html → text, ${runs} runs per body (slowest / median ms, text length)`);
for (const size of sizes) {
  console.log(`\n${(size / 1000).toLocaleString('en')} KB bodies`);
  for (const [name, html] of Object.entries(hostileHtmlBodies(size))) {
    const times: number[] = [];
    let text = '';
    for (let run = 0; run < runs; run += 1) {
      const start = performance.now();
      text = htmlToText(html);
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    const slowest = times.at(-1) ?? 0;
    const median = times[Math.floor(times.length / 2)] ?? 0;
    console.log(
      `  ${name.padEnd(28)} ${slowest.toFixed(1).padStart(7)} / ${median.toFixed(1).padStart(7)} ms   ${String(text.length).padStart(7)} chars`,
    );
  }
}
