import type { GitRepository } from '../git/repository';

/** The paths the user chose to keep in versions ("Include in Versions"), read when a scan finds something. */
export type IncludedPathsSource = () => Promise<ReadonlySet<string>>;

// Keyed by the repository object its RepoContext holds, so the git layer reaches the user's choices without
// touching the store: whoever opens the store for a repository registers its reader here.
const sources = new WeakMap<GitRepository, IncludedPathsSource>();

/** Makes `source` the answer to "which paths did the user include?" for `repo`. */
export function setIncludedPathsSource(repo: GitRepository, source: IncludedPathsSource): void {
  sources.set(repo, source);
}

/** The user's included paths for `repo`; none when no store is attached (then every finding is left out). */
export async function includedPaths(repo: GitRepository): Promise<ReadonlySet<string>> {
  const source = sources.get(repo);
  return source ? source() : new Set();
}
