/**
 * The public API reports: one `api/<entry>.api.md` per entry point of package.json "exports",
 * written by API Extractor from the declarations in dist/ (run `npm run build` first).
 *
 *   npx tsx scripts/api-report.ts           check: fails when an entry's surface differs from its report
 *   npx tsx scripts/api-report.ts --update  writes the reports (commit them with the change)
 *
 * Either way it prints how many names each entry exports. A change to the public surface therefore
 * shows up in review as a change to a report, and CI fails when the code changed it alone.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig, ExtractorLogLevel, type IConfigFile } from '@microsoft/api-extractor';
import ts from 'typescript';
import { z } from 'zod';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const update = process.argv.includes('--update');

const packageJsonSchema = z.object({
  name: z.string(),
  exports: z.record(z.string(), z.union([z.string(), z.object({ types: z.string(), import: z.string() })])),
});
const packageJsonPath = join(root, 'package.json');
const packageJson = packageJsonSchema.parse(JSON.parse(readFileSync(packageJsonPath, 'utf8')));

/** An entry point: its subpath ("." or "./x"), report name and declaration file. */
interface Entry {
  subpath: string;
  reportName: string;
  types: string;
}

const entries: Entry[] = Object.entries(packageJson.exports).flatMap(([subpath, target]) =>
  typeof target === 'string'
    ? []
    : [
        {
          subpath,
          reportName: subpath === '.' ? packageJson.name : `${packageJson.name}-${subpath.slice(2)}`,
          types: join(root, target.types),
        },
      ],
);

/** The configuration of one entry's run: report only (no rollup, no doc model). */
function configFor(entry: Entry): IConfigFile {
  return {
    projectFolder: root,
    mainEntryPointFilePath: entry.types,
    compiler: { tsconfigFilePath: join(root, 'tsconfig.build.json') },
    apiReport: {
      enabled: true,
      reportFileName: entry.reportName,
      reportFolder: join(root, 'api'),
      reportTempFolder: join(root, 'node_modules', '.cache', 'api-report'),
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      // Troupe marks no release tags (@public/@beta); every exported name is public.
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: true },
        'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
        // A type reachable from an entry but not exported by it: shown in the report, not fatal.
        'ae-forgotten-export': { logLevel: ExtractorLogLevel.None, addToApiReportFile: true },
      },
      tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
      compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
    },
  };
}

/** Names an entry exports (values and types), counted from its declarations. */
function exportedNames(program: ts.Program, file: string): string[] {
  const source = program.getSourceFile(file);
  if (!source) throw new Error(`${file} is not part of the declarations program`);
  const checker = program.getTypeChecker();
  const symbol = checker.getSymbolAtLocation(source);
  return symbol ? checker.getExportsOfModule(symbol).map((s) => s.getName()) : [];
}

/** Runs API Extractor on one entry; true when its report matches (or was written). */
function report(entry: Entry): boolean {
  const config = ExtractorConfig.prepare({
    configObject: configFor(entry),
    configObjectFullPath: join(root, 'api-extractor.json'),
    packageJsonFullPath: packageJsonPath,
  });
  const result = Extractor.invoke(config, {
    localBuild: update,
    showVerboseMessages: false,
    messageCallback: (message) => {
      if (message.logLevel === ExtractorLogLevel.Warning || message.logLevel === ExtractorLogLevel.Error) {
        process.stderr.write(`${entry.subpath}: ${message.text}\n`);
      }
      message.handled = true;
    },
  });
  if (!update && result.apiReportChanged) {
    process.stderr.write(
      `${entry.subpath}: the public surface differs from api/${entry.reportName}.api.md. ` +
        'If the change is intended, run `npm run build && npx tsx scripts/api-report.ts --update` and commit the report.\n',
    );
    return false;
  }
  return result.errorCount === 0;
}

function main(): void {
  const missing = entries.filter((e) => !existsSync(e.types));
  if (missing.length > 0) {
    process.stderr.write(
      `No declarations for ${missing.map((e) => e.subpath).join(', ')}: run \`npm run build\` first.\n`,
    );
    process.exit(1);
  }
  mkdirSync(join(root, 'api'), { recursive: true });
  const program = ts.createProgram(
    entries.map((e) => e.types),
    { noEmit: true, skipLibCheck: true },
  );
  let ok = true;
  let total = 0;
  const rows: string[] = [];
  for (const entry of entries) {
    const names = exportedNames(program, entry.types).length;
    total += names;
    rows.push(`${entry.subpath.padEnd(14)} ${String(names).padStart(4)}`);
    if (!report(entry)) ok = false;
  }
  process.stdout.write(
    `entry           names\n${rows.join('\n')}\n${'all'.padEnd(14)} ${String(total).padStart(4)}\n`,
  );
  if (!ok) process.exit(1);
}

main();
