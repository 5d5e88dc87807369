// The folder the extension-host and end-to-end tests open: a real git repository, built the way VS Code's
// own git smoke test builds one. Run as a script it prints the new folder's path (the runners use this).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { git } from '../support/gitFixtures';

export interface TestWorkspace {
  /** Absolute, symlink-free path of the repository's working tree. */
  readonly folder: string;
  /** Deletes the folder (and the temp parent it was created in). */
  dispose(): void;
}

// Removed at exit even when a runner is interrupted before its own cleanup.
const undisposed = new Set<string>();
process.once('exit', () => {
  for (const dir of undisposed) fs.rmSync(dir, { recursive: true, force: true });
});

/** Creates `<tmp>/avh-ws-XXXX/repo`: `git init -b main`, an identity, no signing, one initial commit. */
export function createGitWorkspace(
  options: { parentDir?: string; files?: Record<string, string> } = {},
): TestWorkspace {
  const parent = fs.realpathSync(fs.mkdtempSync(path.join(options.parentDir ?? os.tmpdir(), 'avh-ws-')));
  undisposed.add(parent);
  const dispose = () => {
    undisposed.delete(parent);
    fs.rmSync(parent, { recursive: true, force: true });
  };
  const folder = path.join(parent, 'repo');
  fs.mkdirSync(folder);
  git(folder, 'init', '-q', '-b', 'main');
  git(folder, 'config', 'user.name', 'Test User');
  git(folder, 'config', 'user.email', 'test@example.com');
  git(folder, 'config', 'commit.gpgsign', 'false');
  const files = options.files ?? { 'README.md': '# demo workspace\n', 'src/app.ts': 'export const answer = 42;\n' };
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(folder, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
  git(folder, 'add', '-A');
  git(folder, 'commit', '-q', '-m', 'initial commit');
  return { folder, dispose };
}

if (require.main === module) {
  const { folder } = createGitWorkspace();
  undisposed.clear(); // the caller owns the folder now
  process.stdout.write(`${folder}\n`);
}
