import { Argument, type Command, Option } from 'commander';
import { type DiagramFormat, statechartDiagram } from '../../inspect/statechartDiagram.js';
import { avatarPresenceMachine } from '../../machines/avatarPresence.machine.js';
import { conversationThreadMachine } from '../../machines/conversationThread.machine.js';
import { createRecordMachine } from '../../machines/createRecord.machine.js';
import { emailLifecycleMachine } from '../../machines/emailLifecycle.machine.js';
import { pendingChoiceMachine } from '../../machines/pendingChoice.machine.js';
import type { CliContext } from './cliContext.js';

/** Machines `troupe diagram` can draw. */
const diagramMachines = {
  email: emailLifecycleMachine,
  thread: conversationThreadMachine,
  presence: avatarPresenceMachine,
  choice: pendingChoiceMachine,
  create: createRecordMachine,
} as const;

const diagramFormats: readonly DiagramFormat[] = ['mermaid', 'dot', 'scxml', 'json'];

/** `troupe diagram <machine>`: one statechart printed for design review. */
export function registerDiagramCommand(program: Command, context: CliContext): void {
  program
    .command('diagram')
    .description(
      'Print one statechart for design review: Mermaid (paste into Markdown), Graphviz DOT, SCXML or JSON (troupe charts exports them all).',
    )
    .addArgument(new Argument('<machine>', 'the machine to draw').choices(Object.keys(diagramMachines)))
    .addOption(
      new Option('--format <format>', 'the diagram format').choices(diagramFormats).default('mermaid'),
    )
    .action((name: keyof typeof diagramMachines, flags: { format: DiagramFormat }) => {
      context.io.stdout(statechartDiagram(diagramMachines[name], flags.format));
    });
}
