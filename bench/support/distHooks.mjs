/**
 * Module hooks for the benchmarks (registered by register.mjs):
 *
 * - resolve: an import of Troupe's sources (`../src/x.js`, from bench/ or test/) is served from
 *   `dist/x.js`; a `.js` import of a TypeScript file of bench/ or test/ finds the `.ts` file. No
 *   module under src/ is ever loaded: that is refused.
 * - load: TypeScript files of bench/ and test/ are compiled with `ts.transpileModule` (what tsc
 *   emits for one file; no `__name` wrappers). A dist/ module older than its source, or one holding
 *   a `__name(` call (tsx's or esbuild's keepNames output), is refused, so the figures are always
 *   those of the code the sources describe, as users run it.
 *
 * Compiled files are kept in .bench-cache/ (git-ignored), named by a hash of their text, so a run
 * loads TypeScript only when a benchmark file changed.
 */
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const ROOT = new URL('../../', import.meta.url);
const SRC = new URL('src/', ROOT).href;
const DIST = new URL('dist/', ROOT).href;
const CACHE = fileURLToPath(new URL('.bench-cache/', ROOT));
/** Directories whose TypeScript files are compiled on load. */
const HARNESS = [new URL('bench/', ROOT).href, new URL('test/', ROOT).href];

/** @type {import('node:worker_threads').MessagePort | undefined} */
let port;
/** @param {{ port?: import('node:worker_threads').MessagePort } | undefined} data */
export function initialize(data) {
  port = data?.port;
}

const inHarness = (/** @type {string} */ url) => HARNESS.some((dir) => url.startsWith(dir));

/** The dist/ file of a src/ module URL (`.ts` or `.js`). */
function distOf(/** @type {string} */ srcUrl) {
  return DIST + srcUrl.slice(SRC.length).replace(/\.(ts|js)$/u, '.js');
}

/** The src/ TypeScript file a dist/ module was built from. */
function sourceOf(/** @type {string} */ distUrl) {
  return SRC + distUrl.slice(DIST.length).replace(/\.js$/u, '.ts');
}

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL;
  if (parent !== undefined && inHarness(parent) && /^\.\.?\//u.test(specifier)) {
    const url = new URL(specifier, parent).href;
    if (url.startsWith(SRC)) {
      const dist = distOf(url);
      if (!existsSync(fileURLToPath(dist)))
        throw new Error(`${dist} does not exist: run \`npm run build\` before the benchmarks`);
      return { url: dist, format: 'module', shortCircuit: true };
    }
    if (url.endsWith('.js') && !existsSync(fileURLToPath(url))) {
      const tsUrl = url.replace(/\.js$/u, '.ts');
      if (existsSync(fileURLToPath(tsUrl))) return { url: tsUrl, format: 'module', shortCircuit: true };
    }
  }
  const resolved = await nextResolve(specifier, context);
  if (resolved.url.startsWith(SRC))
    throw new Error(`${resolved.url} is a source file: the benchmarks run Troupe from dist/ only`);
  return resolved;
}

/** @type {Promise<typeof import('typescript')> | undefined} */
let typescript;
const COMPILER_OPTIONS = {
  module: 'ESNext',
  target: 'ES2022',
  verbatimModuleSyntax: true,
  inlineSourceMap: true,
};

/** What tsc emits for one TypeScript file of bench/ or test/, from the cache when the text is unchanged. */
async function compiled(fileName) {
  const text = await readFile(fileName, 'utf8');
  const key = createHash('sha256')
    .update(JSON.stringify(COMPILER_OPTIONS))
    .update('\0')
    .update(fileName)
    .update('\0')
    .update(text)
    .digest('hex');
  const cached = `${CACHE}${key}.js`;
  try {
    return await readFile(cached, 'utf8');
  } catch {
    // not compiled yet
  }
  typescript ??= import('typescript').then((m) => m.default);
  const ts = await typescript;
  const { options } = ts.convertCompilerOptionsFromJson(COMPILER_OPTIONS, '.');
  const out = ts.transpileModule(text, { fileName, compilerOptions: options }).outputText;
  await mkdir(CACHE, { recursive: true });
  const partial = `${cached}.${process.pid}.tmp`;
  await writeFile(partial, out);
  await rename(partial, cached);
  return out;
}

export async function load(url, context, nextLoad) {
  if (url.endsWith('.ts') && inHarness(url))
    return { format: 'module', source: await compiled(fileURLToPath(url)), shortCircuit: true };
  const loaded = await nextLoad(url, context);
  if (url.startsWith(DIST)) {
    const source = sourceOf(url);
    const sourcePath = fileURLToPath(source);
    if (existsSync(sourcePath) && statSync(sourcePath).mtimeMs > statSync(fileURLToPath(url)).mtimeMs)
      throw new Error(`${url} is older than ${source}: run \`npm run build\` before the benchmarks`);
    if (String(loaded.source).includes('__name('))
      throw new Error(`${url} holds __name( wrappers: dist/ must be tsc's output (npm run build)`);
    port?.postMessage(url);
  }
  return loaded;
}
