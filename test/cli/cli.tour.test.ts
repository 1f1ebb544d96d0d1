import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type CliIo, runCli } from '../../src/cli/program.js';

async function tour(args: string[] = [], env: Record<string, string | undefined> = {}, isTTY = false) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env, isTTY };
  const code = await runCli(['tour', ...args], io);
  return { code, stdout, stderr };
}

describe('troupe tour (the real runtime on a simulated clock)', () => {
  it('prints each delivered message with time, number, name and rung, then the summary and the chat hint', async () => {
    const { code, stdout, stderr } = await tour();
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toContain('▶ tour');
    expect(stdout).toContain('Played by the Troupe runtime');
    expect(stdout).toMatch(/^\[00:00\.0\] \[1\] Sam: Hi Luna! Seen any comets tonight\?$/m);
    // The mention is answered after the scenario's generation latency, replying to message [1].
    expect(stdout).toMatch(
      /^\[00:01\.5\] \[2\] 🌙 Luna \(offline\): .+ {2}· ↩ \[1\] Sam · rung mention — Luna was mentioned by Sam$/m,
    );
    expect(stdout).toMatch(/✨ 🦖 Rex was summoned \(5 guaranteed turns\)/);
    expect(stdout).toMatch(/🦖 Rex \(offline\): .+· rung greeting — Rex was summoned by Sam · thread th1$/m);
    expect(stdout).toMatch(/🦖 Rex \(offline\): .*(Luna|Pip).*· rung follow-up — /m);
    expect(stdout).toMatch(/\(offline\): .+· rung thread — .+ is in summon thread th1 /);
    expect(stdout).toMatch(/🧵 thread th1 ended: concluded — /);
    expect(stdout).toMatch(/👋 🦖 Rex was dismissed/);
    expect(stdout).toMatch(/📣 Sam dismisses Rex/);
    // Luna's lookups go through the tool, the demo ERP and the composer.
    expect(stdout).toMatch(/🌙 Luna \(offline\): Purchase order PO-1001 — status open/u);
    expect(stdout).toMatch(/1\. .+\n2\. Parts for Truck Inc — Calgary/u);
    expect(stdout).toMatch(
      /Sam: Luna, 2\n.*🌙 Luna \(offline\): Parts for Truck Inc — Calgary, contact Mira Patel/u,
    );
    // A vendor is created under the demo ERP's agent role; a part is refused by the database.
    expect(stdout).toMatch(
      /Sam: Luna, yes\n.*🌙 Luna \(offline\): Created the vendor Comet Optics \(id \d+\)/u,
    );
    expect(stdout).toMatch(/🌙 Luna \(offline\): I'm not allowed to create parts: the database refused/u);
    // The summary counts what the runtime reported: routing outcomes and floor effects.
    expect(stdout).toContain('── Summary: tour ──');
    expect(stdout).toMatch(/Routing outcomes: [1-9]\d* sent, 0 not delivered/);
    expect(stdout).toMatch(
      /Messages: 11 from people, \d+ avatar messages delivered \(by rung: mention 11, greeting 1, follow-up 1, thread \d+\)/,
    );
    expect(stdout).toMatch(/Threads: 1 opened — concluded 1/);
    expect(stdout).toMatch(/ {2}th1 {2}summon .+ concluded — .+\(Rex, Luna, Pip\)/);
    expect(stdout).toContain('`npm run chat` (or `npx troupe chat`)');
    // It ends by pointing at the studio.
    expect(stdout.trimEnd().split('\n').at(-1)).toContain('`npm run studio` (or `npx troupe studio`)');
    // Rungs follow the numbering: every avatar line carries one.
    // A message may span lines (a composed lookup reply): split at each timestamp.
    const avatarLines = stdout
      .split(/\n(?=\[\d\d:)/u)
      .filter((l) => / \[\d+\] \S+ \w+ \(offline\): /.test(l));
    expect(avatarLines.length).toBeGreaterThanOrEqual(5);
    for (const line of avatarLines) expect(line).toMatch(/· (↩ \[\d+\] \w+ · )?rung [a-z-]+ — /);
  });

  it('ends with the email act: four emails triaged, a notify answered with feedback, the draft sent in its thread, the preference learned', async () => {
    const { code, stdout } = await tour();
    expect(code).toBe(0);
    const act = stdout.slice(stdout.indexOf('▶ email act'));
    expect(act).toMatch(/📨 This week in JavaScript .*\n {3}IGNORE \(rule\): /u);
    expect(act).toMatch(/📨 Project Atlas status update .*\n {3}NOTIFY \(offline\): /u);
    expect(act).toMatch(/📨 Meeting next week\? .*\n {3}RESPOND \(offline\): /u);
    expect(act).toContain(
      '🙋 Waiting for you: sample-02#1 (Email Assistant: notify), sample-03#1 (send_email_tool), sample-04#1 (schedule_meeting_tool)',
    );
    expect(act).toMatch(
      /🧠 Triage preferences, version 1 → 2, learned: .*Project Atlas status update.*jordan@acme\.dev/u,
    );
    expect(act).toMatch(
      /📝 The agent drafts a reply for review \(sample-02#2\): to jordan@acme\.dev, “Re: Project Atlas status update”/u,
    );
    // Shaped by the feedback (a yes, the day named), not pasted from it.
    expect(act).toMatch(/│ .*Yes, happy to\. Thursday works for me\./u);
    expect(act).not.toMatch(/│ .*Say yes to a demo/u);
    expect(act).toContain(
      '📤 Sent to jordan@acme.dev in thread t-02, In-Reply-To <sample-02@mail.example>; the email is done — answered.',
    );
    expect(act).toContain('Still waiting: sample-03#1, sample-04#1.');
  });

  it('replays identically, and colours only on a terminal', async () => {
    const first = await tour();
    const second = await tour();
    expect(second.stdout).toBe(first.stdout);
    expect(first.stdout).not.toContain('\u001b[');
    const tty = await tour([], {}, true);
    expect(tty.stdout).toContain('\u001b[2m· ↩ [1] Sam · rung mention');
    expect((await tour([], { NO_COLOR: '1' }, true)).stdout).not.toContain('\u001b[');
  });

  it('--verbose adds the claims and the candidates held back', async () => {
    const { stdout } = await tour(['--verbose']);
    expect(stdout).toMatch(/ {2}· claim t1: Luna \(response, rung mention, lane main\)/);
    expect(stdout).toMatch(/ {2}· suppressed \w+/);
  });

  it('npm start runs the tour, npm run chat the chat and npm run studio the studio demo, through the one troupe command', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
      scripts: Record<string, string>;
      bin: Record<string, string>;
    };
    expect(pkg.bin.troupe).toBe('./bin/troupe.js');
    expect(pkg.scripts.start).toBe('node bin/troupe.js tour');
    expect(pkg.scripts.chat).toBe('node bin/troupe.js chat');
    expect(pkg.scripts.studio).toBe('node bin/troupe.js studio --demo');
  });
});
