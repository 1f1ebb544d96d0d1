import type { AnyStateMachine } from 'xstate';
import { exportStatechart, type StatechartJson } from '../inspect/statechartModel.js';
import { renderSvg } from '../inspect/statechartSvg.js';
import { avatarPresenceMachine } from '../machines/avatarPresence.machine.js';
import { conversationThreadMachine } from '../machines/conversationThread.machine.js';
import { emailLifecycleMachine } from '../machines/emailLifecycle.machine.js';
import { pendingChoiceMachine } from '../machines/pendingChoice.machine.js';

/** One machine's chart as the studio serves it. */
export interface StudioChart {
  id: 'conversationThread' | 'avatarPresence' | 'pendingChoice' | 'emailLifecycle';
  title: string;
  description: string;
  /** Drawn by the in-process renderer; every state is an element with id `state:<state id>`. */
  svg: string;
  /** The chart as data (`troupe charts --format json`). */
  json: StatechartJson;
}

const charted: { id: StudioChart['id']; title: string; description: string; machine: AnyStateMachine }[] = [
  {
    id: 'conversationThread',
    title: 'Conversation thread',
    description:
      'A thread between avatars: opened by a mention, a summon or a reply; it ends when it expires, runs out of turns or the talk concludes.',
    machine: conversationThreadMachine,
  },
  {
    id: 'avatarPresence',
    title: 'Avatar presence',
    description:
      'One per avatar and channel: ambient or conversing after a summon, and where its turn stands (ready, claimed, generating) until it is dismissed.',
    machine: avatarPresenceMachine,
  },
  {
    id: 'pendingChoice',
    title: 'Pending choice',
    description:
      'After a lookup found several matches: the person picks one by its number or name, or the choice lapses.',
    machine: pendingChoiceMachine,
  },
  {
    id: 'emailLifecycle',
    title: 'Email lifecycle',
    description:
      'An email through the assistant: triage, a notify or a draft for the human to review, the tool calls carried out, then closed.',
    machine: emailLifecycleMachine,
  },
];

/** Every chart the studio shows, drawn from the machine definitions (SVG rendered in-process). */
export async function renderStudioCharts(): Promise<StudioChart[]> {
  return Promise.all(
    charted.map(async ({ machine, ...about }) => {
      const json = exportStatechart(machine);
      return { ...about, svg: await renderSvg(json), json };
    }),
  );
}
