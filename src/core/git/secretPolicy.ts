import type { IncludedPathsSource } from './gitClient';
import type { GitRepository } from './repository';

export type { IncludedPathsSource } from './gitClient';

// The answer lives with the repository's git client, so the git layer reaches the user's choices without touching
// the store: whoever opens the store for a repository registers its reader here.

/** Makes `source` the answer to "which paths did the user include?" for `repo`. */
export function setIncludedPathsSource(repo: GitRepository, source: IncludedPathsSource): void {
  repo.git.setIncludedPaths(repo, source);
}

/** The user's included paths for `repo`; none when no store is attached (then every finding is left out). */
export function includedPaths(repo: GitRepository): Promise<ReadonlySet<string>> {
  return repo.git.includedPaths(repo);
}
