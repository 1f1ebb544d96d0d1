import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { statechartDiagram } from '../../src/inspect/statechartDiagram.js';
import { renderStatechartsDoc } from '../../src/inspect/statechartsDoc.js';
import { avatarPresenceMachine } from '../../src/machines/avatarPresence.machine.js';
import { conversationThreadMachine } from '../../src/machines/conversationThread.machine.js';

interface Node {
  id: string;
  states: Record<string, Node>;
  transitions: Map<string, unknown[]>;
}
const allNodes = (n: Node): Node[] => [n, ...Object.values(n.states).flatMap(allNodes)];

describe('statechart diagrams for design review', () => {
  for (const machine of [conversationThreadMachine, avatarPresenceMachine]) {
    const nodes = allNodes(machine.root as unknown as Node);

    it(`${machine.id}: Mermaid names every state and every event it handles`, () => {
      const mermaid = statechartDiagram(machine, 'mermaid');
      expect(mermaid.startsWith('stateDiagram-v2\n')).toBe(true);
      for (const n of nodes.slice(1)) expect(mermaid).toContain(n.id.replace(/[^A-Za-z0-9_]/g, '_'));
      for (const n of nodes)
        for (const event of n.transitions.keys()) expect(mermaid).toContain(`: ${event}`);
    });

    it(`${machine.id}: DOT is a digraph with a node or cluster per state, each with the id state:<state id>`, () => {
      const dot = statechartDiagram(machine, 'dot');
      expect(dot).toMatch(/^digraph "/);
      for (const n of nodes) expect(dot).toContain(`id="state:${n.id}"`);
      expect(dot.trim().endsWith('}')).toBe(true);
    });
  }

  it('docs/statecharts.md is current (run `npm run statecharts`)', () => {
    expect(readFileSync(new URL('../../docs/statecharts.md', import.meta.url), 'utf8')).toBe(
      renderStatechartsDoc(),
    );
  });

  it('`troupe diagram` prints a diagram, and refuses an unknown machine with exit 2', async () => {
    let out = '';
    let err = '';
    const io = {
      stdout: (s: string) => {
        out += s;
      },
      stderr: (s: string) => {
        err += s;
      },
      env: {},
      isTTY: false,
    };
    expect(await runCli(['diagram', 'presence', '--format', 'dot'], io)).toBe(0);
    expect(out).toContain('digraph "avatarPresence"');
    expect(await runCli(['diagram', 'teapot'], io)).toBe(2);
    expect(err).toContain(
      "'teapot' is invalid for argument 'machine'. Allowed choices are email, thread, presence, choice, create.",
    );
  });
});
