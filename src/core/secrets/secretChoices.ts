import type { RepoContext } from '../context';
import { AvhError } from '../errors';
import { appendToGitignore, excludedSecretPaths, removeExclusion } from '../git/secretExclusion';
import { OPERATIONS } from '../operations/operationKinds';
import { runOperation } from '../operations/runOperation';
import { setIncludedPathsSource } from '../git/secretPolicy';

/** The user's answers to "this file looks like it holds secrets". Owns the `secret_inclusions` table. */

/** What the user is told, once, about a file left out (names the file, never its content). */
export function leftOutMessage(relPath: string): string {
  return (
    `${relPath} looks like it holds secrets, so Agent Version History left it out of versions. It stays in ` +
    `your folder.`
  );
}

/** Lets the repository's version commits see the paths the user included (read only when a scan finds something). */
export function attachSecretChoices(ctx: RepoContext): void {
  setIncludedPathsSource(ctx.repo, () =>
    ctx.store.read(
      (r) => new Set(r.all<{ path: string }>('SELECT path FROM secret_inclusions').map((row) => row.path)),
    ),
  );
}

/**
 * "Include in Versions": remembers the path (durably, before anything else) and removes its exclude line, so
 * the next version takes the file. Refused, changing nothing, for a path we did not leave out.
 */
export async function includeInVersions(ctx: RepoContext, relPath: unknown): Promise<void> {
  const file = validRelativePath(relPath);
  await underLease(ctx, file, async () => {
    await ctx.store.transaction((tx) =>
      tx.run(
        'INSERT INTO secret_inclusions (path, decided_at) VALUES (?, ?) ON CONFLICT (path) DO UPDATE SET ' +
          'decided_at = excluded.decided_at',
        [file, Date.now()],
      ),
    );
    await removeExclusion(ctx.repo, file);
    ctx.log.info('secrets.included', {});
  });
}

/** "Add to .gitignore": appends an anchored pattern to the top-level .gitignore, then removes our exclude line. */
export async function ignoreInGitignore(ctx: RepoContext, relPath: unknown): Promise<void> {
  const file = validRelativePath(relPath);
  await underLease(ctx, file, async () => {
    appendToGitignore(ctx.repo, file);
    await removeExclusion(ctx.repo, file);
    ctx.log.info('secrets.gitignored', {});
  });
}

function underLease(ctx: RepoContext, relPath: string, action: () => Promise<void>): Promise<void> {
  // The exclude block is also written by version commits: one writer at a time.
  return runOperation(ctx, OPERATIONS.secretChoice, async () => {
    if (!(await excludedSecretPaths(ctx.repo)).includes(relPath)) {
      throw new AvhError(
        'invalid-input',
        'That file is not one Agent Version History left out of versions; nothing was changed.',
      );
    }
    await action();
  });
}

/** A repository-relative, `/`-separated path without `.`/`..` segments, as git lists paths. */
function validRelativePath(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 4096) {
    throw new AvhError('invalid-input', 'Give the file as a path relative to the repository root.');
  }
  if (
    value.includes('\0') ||
    value.startsWith('/') ||
    /^[A-Za-z]:/.test(value) ||
    value.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')
  ) {
    throw new AvhError(
      'invalid-input',
      'Give the file as a path relative to the repository root, with / between folders and no . or .. parts.',
    );
  }
  return value;
}
