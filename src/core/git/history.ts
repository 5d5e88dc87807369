import { AvhError } from '../errors';
import type { GitRepository } from './repository';

/**
 * Read-only history queries the turn ledger, restores and recovery need. Never changes refs, the index or files.
 */

const F = '\x1f';
const R = '\x1e';

/** HEAD's commit, or null when HEAD does not resolve (unborn branch). */
export async function readHead(repo: GitRepository): Promise<string | null> {
  const { stdout, code } = await repo.git.run(repo.root, ['rev-parse', '--verify', '-q', 'HEAD'], {
    okCodes: [1, 128],
  });
  return code === 0 ? stdout.trim() || null : null;
}

/** The commit a user-supplied revision names; 'invalid-input' when it is malformed or not a commit. */
export async function resolveCommit(repo: GitRepository, rev: string): Promise<string> {
  if (typeof rev !== 'string' || !/^[0-9a-fA-F]{4,64}$|^[A-Za-z0-9][A-Za-z0-9._/~^-]{0,199}$/.test(rev)) {
    throw new AvhError('invalid-input', 'The version must be a commit id or name.');
  }
  try {
    return (
      await repo.git.run(repo.root, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`])
    ).stdout.trim();
  } catch {
    throw new AvhError('invalid-input', 'That version is not a commit in this repository.');
  }
}

/** The commit's first parent ('' for a root commit). */
export async function firstParent(repo: GitRepository, commit: string): Promise<string> {
  const { stdout, code } = await repo.git.run(repo.root, ['rev-parse', '--verify', '--quiet', `${commit}^`], {
    okCodes: [1],
  });
  return code === 0 ? stdout.trim() : '';
}

/**
 * The paths that differ between two trees (or commits), or that `commit` changed against its first parent (all of a
 * root commit's) when `to` is absent: names only, no renames. The one `diff-tree --name-only` of the product.
 */
export async function changedPaths(repo: GitRepository, from: string, to?: string): Promise<string[]> {
  const args = ['diff-tree', '-r', '-z', '--name-only', '--no-renames'];
  const { stdout } = await repo.git.run(
    repo.root,
    to === undefined ? [...args, '--no-commit-id', '--root', from] : [...args, from, to],
  );
  return stdout.split('\0').filter((p) => p.length > 0);
}

/** Subjects of the commits in `since..HEAD`, newest first. */
export async function subjectsSince(repo: GitRepository, since: string): Promise<string[]> {
  // The zero id (a turn that began on an unborn branch): all of HEAD's history came after it.
  const range = /^0+$/.test(since) ? 'HEAD' : `${since}..HEAD`;
  const { stdout } = await repo.git.run(repo.root, ['log', '--format=%s', range, '--']);
  return stdout.split('\n').filter((s) => s.length > 0);
}

/** A commit's parents and the value of one of its trailers. */
export async function parentsAndTrailer(
  repo: GitRepository,
  commit: string,
  trailer: string,
): Promise<{ parents: string; value: string }> {
  const { stdout } = await repo.git.run(repo.root, [
    'log',
    '-1',
    `--format=%P%x00%(trailers:key=${trailer},valueonly,separator=%x2c)`,
    commit,
    '--',
  ]);
  const [parents, value] = stdout.trim().split('\0');
  return { parents: parents ?? '', value: (value ?? '').trim() };
}

/** The newest of the last `depth` commits on `ref` carrying `Agent-Turn: <turnId>`, or null. */
export async function findTurnCommit(
  repo: GitRepository,
  ref: string,
  turnId: string,
  depth = 50,
): Promise<string | null> {
  let stdout: string;
  try {
    ({ stdout } = await repo.git.run(repo.root, [
      'log',
      `--max-count=${depth}`,
      `--format=%H${F}%(trailers:key=Agent-Turn,valueonly,separator=%x2c)${R}`,
      ref,
      '--',
    ]));
  } catch {
    return null; // the branch is gone
  }
  for (const record of stdout.split(R)) {
    const [oid, turns] = record.replace(/^\n/, '').split(F);
    if (oid && (turns ?? '').trim().split(',').includes(turnId)) return oid;
  }
  return null;
}

export interface AgentCommitRecord {
  oid: string;
  parent: string | null;
  time: number;
  subject: string;
  turnId: string;
  chatId: string;
  branch: string | null;
}

/** `[Agent]` commits on local branches with their trailers, oldest first (for rebuilding a lost state file). */
export async function agentCommits(repo: GitRepository): Promise<AgentCommitRecord[]> {
  const { stdout } = await repo.git.run(repo.root, [
    'log',
    '--branches',
    '--source',
    '--no-color',
    '--grep=^\\[Agent\\] ',
    `--format=%H${F}%P${F}%ct${F}%s${F}%(trailers:key=Agent-Turn,valueonly,separator=%x2c)${F}` +
      `%(trailers:key=Agent-Chat,valueonly,separator=%x2c)${F}%S${R}`,
  ]);
  return stdout
    .split(R)
    .map((r) => r.replace(/^\n/, ''))
    .filter(Boolean)
    .map((record) => {
      const [oid, parents, time, subject, turnId, chatId, source] = record.split(F);
      const branch = source?.trim().replace(/^refs\/heads\//, '') || null;
      return {
        oid,
        parent: parents.split(' ')[0] || null,
        time: Number(time) * 1000,
        subject,
        turnId: turnId.trim(),
        chatId: chatId.trim(),
        branch,
      };
    })
    .filter((t) => t.turnId && t.chatId)
    .reverse();
}

/** Refs under `prefix` mapped from their name (prefix removed) to their commit. */
export async function refsUnder(repo: GitRepository, prefix: string): Promise<Map<string, string>> {
  const { stdout } = await repo.git.run(repo.root, ['for-each-ref', '--format=%(refname) %(objectname)', prefix]);
  const refs = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const [ref, oid] = line.split(' ');
    if (ref && oid) refs.set(ref.slice(prefix.length), oid);
  }
  return refs;
}
