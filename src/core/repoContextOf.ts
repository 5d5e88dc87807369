import type { RepoContext } from './context';
import type { VersionHistory } from './versionHistory';

/**
 * The repository context behind a façade, for the core's own white-box tests and benchmarks only: src/vscode,
 * src/cli and src/vscode act through VersionHistory's methods (eslint forbids them this module).
 */
export function contextOf(history: VersionHistory): RepoContext {
  return history['ctx'];
}
