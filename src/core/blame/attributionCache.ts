import * as crypto from 'node:crypto';
import type { FileAttribution, LineRange } from './lineAttribution';

/**
 * Attributions kept per file and state (the hover answers from here while the user types): keyed by the path, the
 * commit HEAD names, the text attributed and a stamp of our records, so any of them changing is a miss, never a
 * stale answer. Least recently used entries go first. Pure memory: no git, no files.
 */
export class AttributionCache {
  private readonly entries = new Map<string, FileAttribution>();

  constructor(private readonly capacity = 64) {}

  get(key: string): FileAttribution | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, value: FileAttribution): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** After an Undo, a Redo or a turn's end: our records changed, so every attribution may have. */
  clear(): void {
    this.entries.clear();
  }

  /** Entries of one file (the editor closed it). */
  forget(path: string): void {
    for (const key of [...this.entries.keys()]) if (key.startsWith(`${path}\0`)) this.entries.delete(key);
  }
}

/** The cache key: path, HEAD's commit (or the commit attributed), the text's hash, our records' stamp. */
export function attributionKey(parts: {
  path: string;
  head: string | null;
  contents?: string | Buffer;
  factsStamp: string;
}): string {
  const text =
    parts.contents === undefined ? '' : crypto.createHash('sha1').update(parts.contents).digest('hex').slice(0, 20);
  return `${parts.path}\0${parts.head ?? ''}\0${text}\0${parts.factsStamp}`;
}

/** The range holding 1-based `line`, by binary search (ranges are sorted and do not overlap), or null past the end. */
export function lineAt(attribution: FileAttribution, line: number): LineRange | null {
  const { ranges } = attribution;
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = ranges[mid];
    if (line < r.start) hi = mid - 1;
    else if (line > r.end) lo = mid + 1;
    else return r;
  }
  return null;
}

/** Neighbouring ranges with the same owner merged (what an annotation gutter shows: one label per block). */
export function ownerBlocks(
  attribution: FileAttribution,
): { start: number; end: number; turnId: string | null; commit: string | null }[] {
  const blocks: { start: number; end: number; turnId: string | null; commit: string | null }[] = [];
  for (const r of attribution.ranges) {
    const turnId = r.turn?.id ?? null;
    const commit = turnId ? null : r.commit;
    const last = blocks[blocks.length - 1];
    if (last && last.end + 1 === r.start && last.turnId === turnId && last.commit === commit) last.end = r.end;
    else blocks.push({ start: r.start, end: r.end, turnId, commit });
  }
  return blocks;
}

/**
 * Lines of each file still credited to `turnId` (the pane's "lines it still owns"): count per path and the first such
 * line, files in order.
 */
export function linesOwnedBy(
  turnId: string,
  attributions: readonly FileAttribution[],
): { lines: number; files: { path: string; lines: number; first: number }[] } {
  const files = attributions
    .map((a) => {
      const own = a.ranges.filter((r) => r.turn?.id === turnId);
      return { path: a.path, lines: own.reduce((n, r) => n + r.end - r.start + 1, 0), first: own[0]?.start ?? 0 };
    })
    .filter((f) => f.lines > 0);
  return { lines: files.reduce((n, f) => n + f.lines, 0), files };
}
