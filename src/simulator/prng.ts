/** mulberry32: a tiny, fast 32-bit generator; good enough to spread faults, and reproducible from a seed. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * A 32-bit seed for one attempt: FNV-1a over the key, mixed with the run seed and the attempt number.
 * Deriving it per (key, attempt) instead of from one shared stream keeps the faults a key meets the same
 * whatever order concurrent requests arrive in.
 */
export function attemptSeed(seed: number, key: string, attempt: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= attempt;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
