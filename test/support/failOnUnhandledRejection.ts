import { afterEach } from 'vitest';

// A promise the runtime creates and nobody handles is a fault (in production it can end the
// process): every test fails if one was left unhandled while it ran, naming the reason.
const unhandled: unknown[] = [];
process.on('unhandledRejection', (reason) => {
  unhandled.push(reason);
});

afterEach(async () => {
  // Rejections are reported after the microtask queue drains: give them one macrotask to arrive.
  await new Promise<void>((resolve) => setImmediate(resolve));
  if (unhandled.length === 0) return;
  const reasons = unhandled.splice(0).map((r) => (r instanceof Error ? (r.stack ?? r.message) : String(r)));
  throw new Error(`unhandled promise rejection(s) during this test:\n${reasons.join('\n')}`);
});
