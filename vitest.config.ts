import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * `troupe` and `troupe/<entry>` resolve to the sources of package.json's entry points, so the tests
 * that embed Troupe import it as a user does (by its public entries) and still test the code as it
 * is now, not the last build in dist/. tsconfig.json's "paths" say the same to the typechecker.
 */
function packageEntries(): { find: RegExp; replacement: string }[] {
  const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
    exports: Record<string, string | { types: string }>;
  };
  return Object.entries(pkg.exports).flatMap(([subpath, target]) => {
    if (typeof target === 'string') return [];
    const name = subpath === '.' ? 'troupe' : `troupe/${subpath.slice(2)}`;
    const source = target.types.replace(/^\.\/dist\/(.*)\.d\.ts$/, './src/$1.ts');
    return [{ find: new RegExp(`^${name}$`), replacement: new URL(source, import.meta.url).pathname }];
  });
}

export default defineConfig({
  resolve: { alias: packageEntries() },
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    setupFiles: ['test/support/failOnUnhandledRejection.ts'],
    // At least two files at once: many tests mostly wait (child processes, a browser, sockets), and
    // vitest's default (one worker fewer than cores) runs them one by one on a 2-core machine.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // A guard against a hang, not a speed limit: on a loaded machine tests are only slower, and
    // they wait on signals (the runtime's idle signal, a child's output, a server's events).
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // expect.poll watches real I/O (a browser page, a child process): its default second is a
    // speed limit on a loaded machine; a minute is a guard against a hang.
    expect: { poll: { timeout: 60_000 } },
  },
});
