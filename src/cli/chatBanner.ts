import type { ModelFromEnv } from '../adapters/llm/modelFromEnv.js';
import { terminalText } from '../delivery/terminalText.js';
import type { TroupeStore } from '../ports/store.js';
import type { StudioProjection } from '../studio/studioProjection.js';
import { avatarLabel } from './chatAvatars.js';
import { type ChatRoom, livesHere } from './chatRoom.js';

/**
 * Prints who the person is, the avatars and who is here, the model and where the state is kept.
 * Loads the channel on the way: who is here may have been kept from an earlier session.
 */
export async function printChatBanner(
  room: ChatRoom,
  options: {
    bold: (text: string) => string;
    avatarsLabel: string;
    model: ModelFromEnv;
    store: TroupeStore;
    projection: StudioProjection;
  },
): Promise<void> {
  const { avatars, channel, human, dim, say } = room;
  const { store } = options;
  const residents = avatars.filter((a) => livesHere(room, a));
  say(options.bold(`Troupe chat — #${channel.id}, you are ${human.name}`));
  say(`Avatars ${dim(`(${terminalText(options.avatarsLabel)})`)}: ${avatars.map(avatarLabel).join(', ')}`);
  say(
    residents.length > 0
      ? `Here now: ${residents.map(avatarLabel).join(', ')}. Bring the others in with /summon <name>.`
      : 'Nobody is here yet: bring an avatar in with /summon <name>.',
  );
  printModel(room, options.model);
  const opened = await options.projection.open(channel);
  // Loaded now: the avatars summoning created in earlier sessions are known.
  const created = room.avatars.filter((a) => a.created !== undefined);
  if (created.length > 0)
    say(
      `Created by summoning: ${created.map(avatarLabel).join(', ')} ${dim('— /forget <name> removes one')}`,
    );
  const kept = room.avatars.filter((a) => !livesHere(room, a) && opened.present.some((p) => p.id === a.id));
  if (kept.length > 0) say(`Still here from last time: ${kept.map(avatarLabel).join(', ')}.`);
  const where = (store as { path?: string }).path;
  say(
    store.kind === 'memory'
      ? dim('State: in memory only (nothing is kept after you quit).')
      : dim(
          `State: ${store.kind === 'sqlite' ? `SQLite at ${where}` : 'MongoDB'} — who is here, threads and history are kept between sessions (TROUPE_STORE=memory keeps nothing).`,
        ),
  );
  say(`Mention an avatar by name or @name; reply to message [n] with >n <text>. /help lists the commands.`);
  say('');
}

/** The model replies come from; offline, how to configure a real one. */
function printModel(room: ChatRoom, model: ModelFromEnv): void {
  const { dim, say } = room;
  if (model.model.offline) {
    say('Model: OFFLINE — replies are canned lines from the offline scripted model, not an AI.');
    say(
      dim(
        '  For real replies set OPENAI_API_KEY (or ANTHROPIC_API_KEY), or point TROUPE_MODEL_BASE_URL and TROUPE_MODEL ' +
          'at an OpenAI-compatible server; TROUPE_MODEL_PROVIDER picks one explicitly.',
      ),
    );
  } else {
    say(`Model: ${terminalText(model.description)}`);
  }
  const ownModels = room.avatars.filter((a) => room.runtime.modelOf(a.id) !== model.model);
  if (ownModels.length > 0)
    say(
      `Own models: ${ownModels.map((a) => `${avatarLabel(a)} ${terminalText(room.runtime.modelOf(a.id).id)}`).join(', ')}`,
    );
}
