/**
 * Loose objects without starting git (docs/design.md, "Undo's cost"). A commit this product made moments ago is a
 * loose object: `<objects>/<2 hex>/<rest>`, zlib-deflated `commit <size>\0` + headers. Reading one commit's
 * parents or tree (and whether an object is loose, for the commit path's cache-tree shortcut: workingTree.ts):
 * anything else (packed, replaced, unreadable, not a commit, a grafted or shallow repository, refs kept in a
 * reftable) answers null, and the caller asks git. Writing: only the synthetic merge input of Undo Only This Turn,
 * an object on no ref; wherever git's own object writing could differ (another hash, a shared repository, an object
 * directory set from outside), null, and the caller runs `git commit-tree`.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { commonGitDir } from './gitDirs';
import { FULL_OID, OID_OF_FORMAT } from '../domain/objectId';
import type { GitRepository } from './repository';

/**
 * node:zlib, loaded on first use: the hook fast path's bundle holds this module (a version's trees), and a hook event
 * that reads no object never loads zlib (docs/design/hooks-and-fast-path.md, "What it loads").
 */
function zlib(): typeof import('node:zlib') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
  return require('node:zlib') as typeof import('node:zlib');
}

/** The objects folder, the shared one for a linked worktree (`commondir`). */
function objectsDir(gitDir: string): string {
  return path.join(commonGitDir(gitDir), 'objects');
}

/** The parents of loose commit `oid`, in order; null when git must be asked instead. */
export function looseCommitParents(repo: Pick<GitRepository, 'gitDir'>, oid: string): string[] | null {
  const headers = looseCommitHeaders(repo, oid);
  if (headers === null) return null;
  const parents: string[] = [];
  for (const line of headers.slice(1)) {
    if (!line.startsWith('parent ')) break;
    const parent = line.slice('parent '.length);
    if (!FULL_OID.test(parent)) return null;
    parents.push(parent);
  }
  return parents;
}

/** The tree of loose commit `oid` (what `git rev-parse <oid>^{tree}` prints); null when git must be asked instead. */
export function looseCommitTree(repo: Pick<GitRepository, 'gitDir'>, oid: string): string | null {
  const tree = looseCommitHeaders(repo, oid)?.[0].slice('tree '.length) ?? null;
  return tree !== null && FULL_OID.test(tree) && tree.length === oid.length ? tree : null;
}

/** The tree of commit `oid`: from its loose object when it can be read there, else from git (`rev-parse`). */
export async function commitTreeOf(repo: Pick<GitRepository, 'gitDir' | 'git' | 'root'>, oid: string): Promise<string> {
  return looseCommitTree(repo, oid) ?? (await repo.git.run(repo.root, ['rev-parse', `${oid}^{tree}`])).stdout.trim();
}

/**
 * Whether `oid` is a loose object of the repository's own objects folder, which git reads (no object folder set from
 * outside). False says nothing: it may be packed.
 */
export function isLooseObject(repo: Pick<GitRepository, 'gitDir'>, oid: string): boolean {
  if (!FULL_OID.test(oid) || process.env.GIT_OBJECT_DIRECTORY || process.env.GIT_QUARANTINE_PATH) return false;
  return fs.existsSync(path.join(objectsDir(repo.gitDir), oid.slice(0, 2), oid.slice(2)));
}

/**
 * Whether git may report another commit than the object holds: history rewritten by replace refs (kept in
 * refs/replace/, packed, or elsewhere) or grafts, or cut by a shallow clone; refs in a reftable may hold replace
 * refs this cannot see. Then a commit's parents and tree come from git.
 */
export function historyRewritten(repo: Pick<GitRepository, 'gitDir'>): boolean {
  if (process.env.GIT_REPLACE_REF_BASE !== undefined) return true;
  const common = path.dirname(objectsDir(repo.gitDir));
  for (const rewrite of ['info/grafts', 'shallow', 'refs/replace', 'reftable'])
    if (fs.existsSync(path.join(common, rewrite))) return true;
  return (
    fs.existsSync(path.join(common, 'packed-refs')) &&
    /refs\/replace\//.test(fs.readFileSync(path.join(common, 'packed-refs'), 'utf8'))
  );
}

/** The header lines of loose commit `oid` (`tree …` first); null when git must be asked instead. */
function looseCommitHeaders(repo: Pick<GitRepository, 'gitDir'>, oid: string): string[] | null {
  if (!FULL_OID.test(oid) || historyRewritten(repo)) return null;
  let raw: Buffer;
  try {
    raw = zlib().inflateSync(fs.readFileSync(path.join(objectsDir(repo.gitDir), oid.slice(0, 2), oid.slice(2))));
  } catch {
    return null;
  }
  const nul = raw.indexOf(0);
  if (nul < 0 || !raw.subarray(0, nul).toString('latin1').startsWith('commit ')) return null;
  const end = raw.indexOf('\n\n', nul);
  const headers = raw
    .subarray(nul + 1, end < 0 ? raw.length : end)
    .toString('utf8')
    .split('\n');
  if (!headers[0]?.startsWith('tree ')) return null;
  return headers;
}

/** What the synthetic commit holds: a tree, parents, a one-line message, a fixed date, our own name. */
export interface LooseCommitSpec {
  tree: string;
  parents: readonly string[];
  message: string;
  date: number;
}

const OWN_IDENT = 'Agent Version History <agent-versions@localhost>';

/**
 * Writes a commit object as git would store it (same bytes for the same inputs, so the same oid), via a temporary
 * file and a link, never replacing an object already there. Null when this repository needs git to do it.
 */
export function writeLooseCommit(repo: Pick<GitRepository, 'gitDir'>, spec: LooseCommitSpec): string | null {
  if (
    !OID_OF_FORMAT.sha1.test(spec.tree) ||
    !spec.parents.every((p) => OID_OF_FORMAT.sha1.test(p)) ||
    !spec.message.endsWith('\n')
  )
    return null;
  if (process.env.GIT_OBJECT_DIRECTORY || process.env.GIT_QUARANTINE_PATH) return null;
  const objects = objectsDir(repo.gitDir);
  let config = '';
  try {
    config = fs.readFileSync(path.join(path.dirname(objects), 'config'), 'utf8');
  } catch {
    return null;
  }
  // Another object format (SHA-256) or group-shared permissions: git knows how those are written.
  if (/^\s*(objectformat|sharedrepository)\s*=/im.test(config)) return null;
  const headers = [
    `tree ${spec.tree}`,
    ...spec.parents.map((p) => `parent ${p}`),
    `author ${OWN_IDENT} ${spec.date} +0000`,
    `committer ${OWN_IDENT} ${spec.date} +0000`,
  ];
  const body = Buffer.from(`${headers.join('\n')}\n\n${spec.message}`, 'utf8');
  const object = Buffer.concat([Buffer.from(`commit ${body.length}\0`, 'latin1'), body]);
  const oid = crypto.createHash('sha1').update(object).digest('hex');
  const dir = path.join(objects, oid.slice(0, 2));
  const file = path.join(dir, oid.slice(2));
  try {
    if (fs.existsSync(file)) return oid;
    fs.mkdirSync(dir, { recursive: true });
    const temporary = path.join(dir, `tmp_obj_avh_${process.pid}_${crypto.randomBytes(4).toString('hex')}`);
    fs.writeFileSync(temporary, zlib().deflateSync(object), { mode: 0o444 });
    try {
      fs.linkSync(temporary, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      fs.rmSync(temporary, { force: true });
    }
    return oid;
  } catch {
    return null;
  }
}
