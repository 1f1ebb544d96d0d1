/** A small deterministic generator of numbers in [0, 1), so a failing property replays. */
export function seededRandom(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return x / 2 ** 31;
  };
}
