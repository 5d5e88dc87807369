/**
 * Parsing `git blame --incremental` (the porcelain header format without line text): groups of consecutive lines
 * of the final file that one commit wrote, with that commit's author, time and summary (given once per commit).
 * Pure.
 */

export interface BlameGroup {
  commit: string;
  /** First line of the group in the commit's version of the file (1-based). */
  origLine: number;
  /** First line of the group in the file attributed (1-based). */
  finalLine: number;
  count: number;
  /** The file's path in that commit (differs from the path asked for when git followed a rename). */
  path: string;
  /** Where blame looked before (the commit's attribution parent and the path there), when the file existed there. */
  previous: { commit: string; path: string } | null;
}

export interface BlameCommit {
  commit: string;
  author: string;
  authorMail: string;
  /** Seconds since the epoch. */
  authorTime: number;
  summary: string;
  /** The walk stopped here (a root commit, or the end of the ancestry): its lines may be older still. */
  boundary: boolean;
}

export interface ParsedBlame {
  groups: BlameGroup[];
  commits: Map<string, BlameCommit>;
}

const HEADER = /^([0-9a-f]{40}(?:[0-9a-f]{24})?) (\d+) (\d+) (\d+)$/;

export function parseIncremental(text: string): ParsedBlame {
  const groups: BlameGroup[] = [];
  const commits = new Map<string, BlameCommit>();
  let group: Omit<BlameGroup, 'path' | 'previous'> | null = null;
  let previous: BlameGroup['previous'] = null;
  let info: BlameCommit | null = null;
  for (const line of text.split('\n')) {
    if (group === null) {
      const m = HEADER.exec(line);
      if (!m) continue;
      group = { commit: m[1], origLine: Number(m[2]), finalLine: Number(m[3]), count: Number(m[4]) };
      previous = null;
      info = commits.get(m[1]) ?? null;
      if (!info) {
        info = { commit: m[1], author: '', authorMail: '', authorTime: 0, summary: '', boundary: false };
        commits.set(m[1], info);
      }
      continue;
    }
    const space = line.indexOf(' ');
    const key = space < 0 ? line : line.slice(0, space);
    const value = space < 0 ? '' : line.slice(space + 1);
    switch (key) {
      case 'author':
        info!.author = value;
        break;
      case 'author-mail':
        info!.authorMail = value.replace(/^<|>$/g, '');
        break;
      case 'author-time':
        info!.authorTime = Number(value);
        break;
      case 'summary':
        info!.summary = value;
        break;
      case 'boundary':
        info!.boundary = true;
        break;
      case 'previous': {
        const at = value.indexOf(' ');
        previous = { commit: value.slice(0, at), path: unquotePath(value.slice(at + 1)) };
        break;
      }
      case 'filename':
        // The last line of every group.
        groups.push({ ...group, path: unquotePath(value), previous });
        group = null;
        break;
      default:
        break;
    }
  }
  groups.sort((a, b) => a.finalLine - b.finalLine);
  return { groups, commits };
}

const ESCAPES: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92, '"': 34 };

/** git's C-style quoting of unusual path names ("\"a\\tb\"", octal bytes for non-ASCII), undone. */
export function unquotePath(text: string): string {
  if (!text.startsWith('"') || !text.endsWith('"') || text.length < 2) return text;
  const bytes: number[] = [];
  const body = text.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'));
      continue;
    }
    const next = body[++i];
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(body.slice(i, i + 3), 8));
      i += 2;
    } else bytes.push(ESCAPES[next] ?? next.charCodeAt(0));
  }
  return Buffer.from(bytes).toString('utf8');
}
