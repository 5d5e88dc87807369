import type { GitRepository } from './repository';
import type { TemporaryIndex } from './temporaryIndex';

/** One path a version takes from another commit instead of the working tree (docs/design/two-chats.md). */
export interface PathFromCommit {
  path: string;
  /** The commit whose content the path gets; absent there: the path is left out of the version. */
  commit: string;
}

const NO_OID = /^0+$/;

/**
 * Sets each path of `index` to its entry in its commit (mode and blob), or removes it when the commit has none,
 * then writes the index's tree. Objects only: the working tree and the user's index are not touched. Paths are
 * literal (no pathspec magic); one `ls-tree` per commit, one `update-index --index-info` for all.
 */
export async function takePathsFromCommits(
  repo: GitRepository,
  index: TemporaryIndex,
  entries: readonly PathFromCommit[],
): Promise<string> {
  const byCommit = new Map<string, string[]>();
  for (const { path, commit } of entries) byCommit.set(commit, [...(byCommit.get(commit) ?? []), path]);
  const lines: string[] = [];
  for (const [commit, paths] of byCommit) {
    const { stdout } = await repo.git.run(repo.root, [
      '--literal-pathspecs',
      'ls-tree',
      '-r',
      '-z',
      '--full-tree',
      commit,
      '--',
      ...paths,
    ]);
    const found = new Map<string, string>();
    for (const record of stdout.split('\0').filter(Boolean)) {
      const tab = record.indexOf('\t');
      const [mode, type, oid] = record.slice(0, tab).split(' ');
      if (type === 'blob' || type === 'commit') found.set(record.slice(tab + 1), `${mode} ${oid}`);
    }
    for (const path of paths) {
      const entry = found.get(path);
      // Mode 0 removes the path from the index (git update-index --index-info); a zero id as long as the commit's.
      lines.push(`${entry && !NO_OID.test(entry.split(' ')[1]) ? entry : `0 ${'0'.repeat(commit.length)}`}\t${path}`);
    }
  }
  if (lines.length > 0) {
    await repo.git.run(repo.root, ['update-index', '-z', '--index-info'], {
      env: index.env,
      input: `${lines.join('\0')}\0`,
    });
  }
  return (await repo.git.run(repo.root, ['write-tree'], { env: index.env })).stdout.trim();
}
