import { isAbsolute, relative } from 'node:path';
import type { Command } from 'commander';
import { runChat } from '../chat.js';
import type { CliContext } from './cliContext.js';

interface ChatFlags {
  avatars?: string;
  name: string;
  channel: string;
  studio?: boolean;
  playground?: boolean;
  verbose?: boolean;
}

/** `troupe chat`: a terminal channel with the avatars of a file, on the real runtime. */
export function registerChatCommand(program: Command, context: CliContext): void {
  program
    .command('chat')
    .description(
      'Chat in a terminal channel with the avatars of a file, on the real runtime (offline scripted replies unless a model is configured).',
    )
    .option('--avatars <file>', 'avatars file, YAML or JSON (default: examples/chat/avatars.yaml)')
    .option('--name <name>', 'your name in the channel', 'Guest')
    .option('--channel <id>', 'the channel id: you are in terminal:<id>', 'lobby')
    .option(
      '--studio',
      'serve Troupe Studio on this chat’s runtime (127.0.0.1, any free port, the URL printed)',
    )
    .option('--playground', 'with --studio: the page may post into this channel, summon and dismiss')
    .option('--verbose', 'also show claims, suppressed candidates and how many messages each turn saw')
    .action(async (flags: ChatFlags) => {
      const { io } = context;
      const config = context.baseConfig();
      if (!config) return;
      const avatarsFile = flags.avatars ?? context.examplesPath('chat/avatars.yaml');
      context.exitCode = await runChat({
        avatarsFile,
        avatarsLabel: flags.avatars ?? shownPath(avatarsFile),
        name: flags.name,
        channel: flags.channel,
        config,
        input: io.stdin ?? process.stdin,
        stdout: io.stdout,
        stderr: context.stderr,
        env: io.env,
        isTTY: io.isTTY,
        color: context.useColor,
        ...(flags.studio ? { studio: true } : {}),
        ...(flags.playground ? { playground: true } : {}),
        ...(flags.verbose ? { verbose: true } : {}),
      });
    });
}

/** The file relative to the working directory when it lies under it, else as it is. */
function shownPath(file: string): string {
  const shown = relative(process.cwd(), file);
  return shown && !shown.startsWith('..') && !isAbsolute(shown) ? shown : file;
}
