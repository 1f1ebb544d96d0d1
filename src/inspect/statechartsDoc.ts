import { avatarPresenceMachine } from '../machines/avatarPresence.machine.js';
import { conversationThreadMachine } from '../machines/conversationThread.machine.js';
import { createRecordMachine } from '../machines/createRecord.machine.js';
import { pendingChoiceMachine } from '../machines/pendingChoice.machine.js';
import { statechartDiagram } from './statechartDiagram.js';

/** The Markdown of `docs/statecharts.md`: every machine drawn from its own definition. */
export function renderStatechartsDoc(): string {
  const section = (title: string, blurb: string, machine: Parameters<typeof statechartDiagram>[0]) =>
    `## ${title}\n\n${blurb}\n\n\`\`\`mermaid\n${statechartDiagram(machine)}\`\`\`\n`;
  return [
    '# Statecharts',
    '',
    'Generated from the machine definitions by `npm run statecharts` (a test fails when this file',
    'is stale). `npx troupe diagram <thread|presence|choice|email|create>` prints one of them; `npx troupe charts`',
    'exports them all as Mermaid, DOT, SCXML, SVG or JSON (see [charts](charts.md)).',
    '',
    section(
      'Conversation thread',
      '`src/machines/conversationThread.machine.ts`. Deadlines are absolute times in context; the eventless transitions fire on the first event at or after them.',
      conversationThreadMachine,
    ),
    section(
      'Avatar presence',
      '`src/machines/avatarPresence.machine.ts`. One per avatar and channel, kept as a snapshot (data) by the channel floor.',
      avatarPresenceMachine,
    ),
    section(
      'Pending choice',
      '`src/machines/pendingChoice.machine.ts`. One per channel and person after a disambiguation: a reply that picks an option resolves it (the lookup re-runs by id), anything else clears it, and it expires at its deadline.',
      pendingChoiceMachine,
    ),
    section(
      'Create record',
      '`src/machines/createRecord.machine.ts`. One per channel and person after "create vendor Acme": the required fields are asked one at a time, the row is shown until yes, no or a correction, and the insert ends it created or failed. No, or the deadline, ends it without an insert.',
      createRecordMachine,
    ),
  ].join('\n');
}
