import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { troupeMachines } from '../../src/cli/charts.js';
import { type CliIo, runCli } from '../../src/cli/program.js';
import type { StatechartJson } from '../../src/inspect/statechartModel.js';
import { troupeErrorCodes } from '../../src/ports/errorCodes.js';
import { orderMachine, toggleMachine } from '../fixtures/charts/userMachines.mjs';
import {
  edgeKeys,
  expectDotShows,
  expectedFromConfig,
  expectMermaidShows,
  expectScxmlShows,
  expectSvgShows,
} from '../support/chartExpectations.js';

const fixtures = fileURLToPath(new URL('../fixtures/charts/', import.meta.url));
const userModule = join(fixtures, 'userMachines.mjs');

async function charts(args: string[], cwd?: string) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    env: {},
    isTTY: false,
    ...(cwd ? { cwd } : {}),
  };
  const code = await runCli(['charts', ...args], io);
  return { code, stdout, stderr };
}

const tempDir = () => mkdtemp(join(tmpdir(), 'troupe-charts-'));

describe('troupe charts', () => {
  it('prints every Troupe machine as Mermaid by default, each labelled, with all its states and transitions', async () => {
    const { code, stdout } = await charts([]);
    expect(code).toBe(0);
    const parts = stdout.split(/^%% ── (\S+) ──\n/m).slice(1);
    const byName = new Map<string, string>();
    for (let i = 0; i < parts.length; i += 2) byName.set(parts[i] ?? '', parts[i + 1] ?? '');
    expect([...byName.keys()].sort()).toEqual(troupeMachines.map((m) => m.id).sort());
    for (const machine of troupeMachines)
      expectMermaidShows(
        byName.get(machine.id)?.trimEnd().concat('\n') ?? '',
        expectedFromConfig(machine),
        machine.id,
      );
  });

  it('--format json prints one JSON document with every machine, states and transitions as in the definition', async () => {
    const { code, stdout } = await charts(['--format', 'json']);
    expect(code).toBe(0);
    const doc = JSON.parse(stdout) as { machines: { name: string; chart: StatechartJson }[] };
    expect(doc.machines.map((m) => m.name)).toEqual(troupeMachines.map((m) => m.id));
    for (const [i, machine] of troupeMachines.entries()) {
      const chart = doc.machines[i]?.chart;
      const expected = expectedFromConfig(machine);
      expect(chart?.transitions.length).toBeGreaterThan(0);
      const events = new Set(chart?.transitions.map((t) => (t.kind === 'always' ? 'always' : t.event)));
      for (const e of expected.edges) expect(events).toContain(e.trigger);
    }
  });

  for (const [format, ext] of [
    ['mermaid', 'mmd'],
    ['dot', 'dot'],
    ['scxml', 'scxml'],
    ['json', 'json'],
    ['svg', 'svg'],
  ] as const) {
    it(`--format ${format} --out writes one .${ext} file per Troupe machine, each complete`, async () => {
      const dir = await tempDir();
      const { code, stdout } = await charts(['--format', format, '--out', dir]);
      expect(code).toBe(0);
      expect((await readdir(dir)).sort()).toEqual(troupeMachines.map((m) => `${m.id}.${ext}`).sort());
      expect(stdout).toContain(join(dir, `emailLifecycle.${ext}`));
      for (const machine of troupeMachines) {
        const text = await readFile(join(dir, `${machine.id}.${ext}`), 'utf8');
        const expected = expectedFromConfig(machine);
        if (format === 'mermaid') expectMermaidShows(text, expected, machine.id);
        if (format === 'dot') expectDotShows(text, expected);
        if (format === 'scxml') expectScxmlShows(text, expected);
        if (format === 'svg') expectSvgShows(text, expected);
        if (format === 'json') {
          const chart = JSON.parse(text) as StatechartJson;
          expect(chart.id).toBe(machine.id);
          expect(chart.transitions.length).toBe(new Set(chart.transitions).size);
        }
      }
    });
  }

  it('svg without --out writes into ./charts (of the working directory)', async () => {
    const cwd = await tempDir();
    const { code } = await charts(['--format', 'svg'], cwd);
    expect(code).toBe(0);
    expect((await readdir(join(cwd, 'charts'))).sort()).toEqual(
      troupeMachines.map((m) => `${m.id}.svg`).sort(),
    );
  });

  it("--module exports a user's own machines (every export that is one) in every format", async () => {
    for (const format of ['mermaid', 'dot', 'scxml', 'svg', 'json'] as const) {
      const dir = await tempDir();
      const { code, stderr } = await charts(['--module', userModule, '--format', format, '--out', dir]);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      const ext = format === 'mermaid' ? 'mmd' : format;
      // notAMachine looks a little like one and is left out.
      expect((await readdir(dir)).sort()).toEqual([`orderMachine.${ext}`, `toggleMachine.${ext}`]);
      for (const [name, machine] of [
        ['orderMachine', orderMachine],
        ['toggleMachine', toggleMachine],
      ] as const) {
        const text = await readFile(join(dir, `${name}.${ext}`), 'utf8');
        const expected = expectedFromConfig(machine);
        if (format === 'mermaid') expectMermaidShows(text, expected, machine.id);
        if (format === 'dot') expectDotShows(text, expected);
        if (format === 'scxml') expectScxmlShows(text, expected);
        if (format === 'svg') expectSvgShows(text, expected);
        if (format === 'json') {
          const chart = JSON.parse(text) as StatechartJson;
          const edges = chart.transitions.flatMap((t) =>
            (t.targets.length > 0 ? t.targets : [t.source]).map((target) => ({
              source: t.source,
              trigger: t.label.split(/ \[| \//)[0] ?? '',
              target,
            })),
          );
          expect(edgeKeys(edges)).toEqual(edgeKeys(expected.edges));
        }
      }
    }
  });

  it('--module with --export exports only the named machines (a relative path starts at the working directory)', async () => {
    const { code, stdout } = await charts(
      ['--module', 'userMachines.mjs', '--export', 'toggleMachine', '--format', 'dot'],
      fixtures,
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(/^\/\/ ── toggleMachine ──\ndigraph "toggle"/);
    expect(stdout).not.toContain('order');
  });

  it('refuses an unknown format with exit 2, naming the formats', async () => {
    const { code, stdout, stderr } = await charts(['--format', 'png']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(
      "argument 'png' is invalid. Allowed choices are mermaid, dot, scxml, svg, json.",
    );
  });

  describe('refuses with TROUPE_CHARTS_INVALID and exit 2', () => {
    it('a module that exports no state machine', async () => {
      const { code, stderr } = await charts(['--module', join(fixtures, 'noMachines.mjs')]);
      expect(code).toBe(2);
      expect(stderr).toContain('TROUPE_CHARTS_INVALID');
      expect(stderr).toContain('exports no XState state machine (exports: answer, config)');
    });

    it('a module that cannot be loaded', async () => {
      const { code, stderr } = await charts(['--module', join(fixtures, 'missing.mjs')]);
      expect(code).toBe(2);
      expect(stderr).toContain('TROUPE_CHARTS_INVALID: cannot load the module');
    });

    it('an --export that is not a machine, naming the machines there are', async () => {
      const { code, stderr } = await charts(['--module', userModule, '--export', 'notAMachine']);
      expect(code).toBe(2);
      expect(stderr).toContain(
        '"notAMachine" in ' +
          userModule +
          ' is not an XState state machine; its machines: orderMachine, toggleMachine',
      );
    });

    it('--export without --module', async () => {
      const { code, stderr } = await charts(['--export', 'x']);
      expect(code).toBe(2);
      expect(stderr).toContain('--export names exports of a module');
    });
  });

  it.each([
    [
      ['diagram', 'nope'],
      "'nope' is invalid for argument 'machine'. Allowed choices are email, thread, presence, choice, create.",
    ],
    [
      ['diagram', 'email', '--format', 'svg'],
      "'svg' is invalid. Allowed choices are mermaid, dot, scxml, json.",
    ],
  ])(
    'troupe %j is refused with exit 2, naming the choices, and no unregistered code',
    async (argv, expected) => {
      let out = '';
      let err = '';
      const io: CliIo = { stdout: (t) => (out += t), stderr: (t) => (err += t), env: {}, isTTY: false };
      expect(await runCli(argv, io)).toBe(2);
      expect(out).toBe('');
      expect(err).toContain(expected);
      for (const printed of err.match(/TROUPE_[A-Z_]+/g) ?? []) expect(troupeErrorCodes).toContain(printed);
      expect(err).not.toContain('TROUPE_DIAGRAM_UNKNOWN');
    },
  );

  it('troupe diagram still prints one machine (and its new formats)', async () => {
    let out = '';
    const io: CliIo = { stdout: (t) => (out += t), stderr: () => undefined, env: {}, isTTY: false };
    expect(await runCli(['diagram', 'email', '--format', 'scxml'], io)).toBe(0);
    expectScxmlShows(
      out,
      expectedFromConfig(troupeMachines.find((m) => m.id === 'emailLifecycle') ?? orderMachine),
    );
  });
});
