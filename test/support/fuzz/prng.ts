import { seededRandom } from '../seededRandom';

/** The fuzzer's draws: mulberry32 (test/support/seededRandom.ts) with the helpers a step generator needs. */
export interface Prng {
  readonly seed: number;
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** A key of `weights` drawn in proportion to its weight (weights ≤ 0 are never drawn). */
  weighted<K extends string>(weights: Partial<Record<K, number>>): K;
}

export function prng(seed: number): Prng {
  const r = seededRandom(seed);
  const int = (n: number) => Math.floor(r.next() * n);
  return {
    seed,
    next: () => r.next(),
    int,
    chance: (p) => r.next() < p,
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[int(items.length)];
    },
    weighted: (weights) => {
      const entries = Object.entries(weights).filter(([, w]) => (w as number) > 0) as [never, number][];
      const total = entries.reduce((s, [, w]) => s + w, 0);
      let x = r.next() * total;
      for (const [k, w] of entries) {
        if ((x -= w) < 0) return k;
      }
      return entries[entries.length - 1][0];
    },
  };
}
