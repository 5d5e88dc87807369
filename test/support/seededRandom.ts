/**
 * Random numbers a failing run can repeat: a small PRNG (mulberry32) seeded from AVH_TEST_SEED when set, else
 * from the clock. Tests that draw timings from it print the seed, so `AVH_TEST_SEED=<seed>` replays the draws.
 */
export interface SeededRandom {
  readonly seed: number;
  /** A number in [0, 1), like Math.random(). */
  next(): number;
}

export function seededRandom(seed: number = seedFromEnv()): SeededRandom {
  let state = seed >>> 0;
  return {
    seed,
    next() {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}

export function seedFromEnv(): number {
  const given = process.env.AVH_TEST_SEED;
  if (given !== undefined && /^\d+$/.test(given)) return Number(given) >>> 0;
  return Date.now() >>> 0;
}
