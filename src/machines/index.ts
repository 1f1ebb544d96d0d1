/**
 * `troupe/machines`: Troupe's pure coordination core — the machines, the channel floor, and
 * statechart diagrams of the machines (Mermaid, DOT, SCXML, SVG, JSON) for design review. No I/O, no clocks, no
 * environment — time comes from events, configuration is passed in.
 * @packageDocumentation
 */

export { createMachineStepper, type MachineStepper } from '../engine/machineStepper.js';
export { ChannelFloor, type ChannelFloorOptions, type FloorView } from '../floor/channelFloor.js';
export {
  type DrivenFloor,
  type FloorClock,
  FloorDriver,
  type FloorDriverHooks,
  type FloorDriverOptions,
  type TurnRelease,
} from '../floor/floorDriver.js';
export { type FloorSnapshot, FloorSnapshotError, floorSnapshotSchema } from '../floor/floorSnapshotSchema.js';
export type * from '../floor/floorTypes.js';
export {
  type ChartFormat,
  chartFormats,
  renderStatechart,
} from '../inspect/renderStatechart.js';
export { type DiagramFormat, statechartDiagram } from '../inspect/statechartDiagram.js';
export {
  exportStatechart,
  STATECHART_JSON_VERSION,
  type StatechartJson,
  type StatechartState,
  type StatechartTransition,
} from '../inspect/statechartModel.js';
export { isFarewell } from '../textRules/farewell.js';
export { type InitiativeScore, initiativeScore, topicHits, wordsOf } from '../textRules/initiative.js';
export { createMentionMatcher, type MentionMatcher } from '../textRules/mentionMatcher.js';
export { type Attention, attentionAt, boostAttention } from './attention.js';
export {
  type AvatarPresenceContext,
  type AvatarPresenceEvent,
  type AvatarPresenceInput,
  avatarPresenceMachine,
  hasAffinity,
  type PresenceSettings,
  type TurnClaimRef,
} from './avatarPresence.machine.js';
export {
  type ConversationThreadContext,
  type ConversationThreadEvent,
  type ConversationThreadInput,
  conversationThreadMachine,
  threadDeadline,
} from './conversationThread.machine.js';
export {
  type CreateRecordContext,
  type CreateRecordEvent,
  type CreateRecordInput,
  createRecordMachine,
} from './createRecord.machine.js';
export {
  type EmailLifecycleContext,
  type EmailLifecycleEvent,
  type EmailLifecycleInput,
  type EmailOutcome,
  emailLifecycleMachine,
} from './emailLifecycle.machine.js';
export { pendingChoiceMachine } from './pendingChoice.machine.js';
export { rungOrder, rungRanks, type ThreadPriority } from './rungOrder.js';
