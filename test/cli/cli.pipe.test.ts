import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../../bin/troupe.js', import.meta.url));
const root = fileURLToPath(new URL('../..', import.meta.url));

/** Runs the command with its stdout closed by the reader before it writes (as `| head -0` does). */
function runWithReaderGone(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.destroy();
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('troupe on a pipe its reader has closed', () => {
  it('ends quietly with success, as a Unix tool does', async () => {
    const { code, stderr } = await runWithReaderGone(['simulate', 'examples/group-mention.yaml']);
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  });
});
