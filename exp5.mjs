import { compile } from 'html-to-text';
const opts = { wordwrap: false, limits: { maxDepth: 64, maxChildNodes: 5000, maxBaseElements: 1 }, selectors: [ { selector: 'a', options: { ignoreHref: true } }, { selector: 'img', format: 'skip' } ] };
const f = compile(opts);
const n = Number(process.argv[2]);
const bodies = {
  lt: '<'.repeat(n),
  brs: '<br>'.repeat(n/4),
  brsdiv: ('<div>' + '<br>'.repeat(1000) + '</div>').repeat(n/4011),
  nested: '<div>'.repeat(n/5),
  nestedspan: '<span><b>'.repeat(n/9),
  tableNested: '<table><tr><td>'.repeat(n/15),
  p: '<p>'.repeat(n/3),
  li: '<ul>' + '<li>'.repeat(n/4),
  lix: '<ul>' + '<li>x</li>'.repeat(n/10),
  pdiv: ('<div>' + '<p>x</p>'.repeat(500) + '</div>').repeat(n/4011),
  ab: '<a>b</a>'.repeat(n/8),
  closes: '<span>'.repeat(1000) + '</div>'.repeat(n/6),
};
for (const [k, v] of Object.entries(bodies)) {
  const ts = [];
  let out;
  for (let rep=0; rep<4; rep++) { const t = performance.now(); out = f(v); ts.push(performance.now() - t); }
  console.log(n, k, ts.map(x=>x.toFixed(0)).join(' '), 'ms', out.length);
}
