/**
 * Reading one fresh commit's parents without starting git (docs/design.md, "Undo's cost"). A commit this product
 * made moments ago is a loose object: `<objects>/<2 hex>/<rest>`, zlib-deflated `commit <size>\0` + headers.
 * Anything else (packed, replaced, unreadable, not a commit, a grafted or shallow repository) answers null, and
 * the caller asks git. Only ever used to skip a lookup whose answer the parents decide; never to write.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import type { GitRepository } from './repository';

const OID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** The objects folder, the shared one for a linked worktree (`commondir`). */
function objectsDir(gitDir: string): string {
  try {
    const common = fs.readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim();
    return path.join(path.resolve(gitDir, common), 'objects');
  } catch {
    return path.join(gitDir, 'objects');
  }
}

/** The parents of loose commit `oid`, in order; null when git must be asked instead. */
export function looseCommitParents(repo: GitRepository, oid: string): string[] | null {
  if (!OID.test(oid)) return null;
  const common = path.dirname(objectsDir(repo.gitDir));
  // History rewritten by replace refs or grafts, or cut by a shallow clone: what git reports may differ from the object.
  for (const rewrite of ['info/grafts', 'shallow', 'refs/replace']) if (fs.existsSync(path.join(common, rewrite))) return null;
  if (fs.existsSync(path.join(common, 'packed-refs')) && /refs\/replace\//.test(fs.readFileSync(path.join(common, 'packed-refs'), 'utf8'))) return null;
  let raw: Buffer;
  try {
    raw = zlib.inflateSync(fs.readFileSync(path.join(objectsDir(repo.gitDir), oid.slice(0, 2), oid.slice(2))));
  } catch {
    return null;
  }
  const nul = raw.indexOf(0);
  if (nul < 0 || !raw.subarray(0, nul).toString('latin1').startsWith('commit ')) return null;
  const end = raw.indexOf('\n\n', nul);
  const headers = raw.subarray(nul + 1, end < 0 ? raw.length : end).toString('utf8').split('\n');
  if (!headers[0]?.startsWith('tree ')) return null;
  const parents: string[] = [];
  for (const line of headers.slice(1)) {
    if (!line.startsWith('parent ')) break;
    const parent = line.slice('parent '.length);
    if (!OID.test(parent)) return null;
    parents.push(parent);
  }
  return parents;
}
