import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const CHECK = path.resolve(__dirname, '../../../scripts/checkImportCycles.mjs');

/** A tree laid out like this repository's src/, in a temporary folder: `files` maps a path to its text. */
function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-layers-'));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  return root;
}

function check(root: string) {
  const r = spawnSync(process.execPath, [CHECK, '--root', root], { encoding: 'utf8' });
  fs.rmSync(root, { recursive: true, force: true });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** The lint step's layer rule (scripts/importLayers.mjs), run by the real script on small trees. */
describe('the import check: folders are layers (scripts/checkImportCycles.mjs)', () => {
  it('passes on this repository', () => {
    const r = spawnSync(process.execPath, [CHECK], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(
      r.stdout,
      /no cycles, no import from a lower layer to a higher one, the core reached through its façade/,
    );
  });

  it('fails on an import from a lower layer to a higher one, naming the rule, the file and both layers', () => {
    const r = check(
      tree({
        'src/core/git/gitVerb.ts': "import { label } from '../../vscode/statusBar';\nexport const verb = label;\n",
        'src/vscode/statusBar.ts': "export const label = 'x';\n",
      }),
    );
    assert.equal(r.code, 1);
    assert.match(
      r.err,
      /layers\/no-upward-import: src\/core\/git\/gitVerb\.ts \(layer of src\/core\/git\/\) imports src\/vscode\/statusBar\.ts \(layer of src\/vscode\/, above it\)/,
    );
  });

  it('fails on a type-only upward import too, and inside the core (store below git)', () => {
    const r = check(
      tree({
        'src/core/store/journal.ts': "import type { Repo } from '../git/repository';\nexport type J = Repo;\n",
        'src/core/git/repository.ts': 'export interface Repo { root: string }\n',
      }),
    );
    assert.equal(r.code, 1);
    assert.match(
      r.err,
      /layers\/no-upward-import: src\/core\/store\/journal\.ts .* imports src\/core\/git\/repository\.ts/,
    );
  });

  it('passes imports downwards and within a layer', () => {
    const r = check(
      tree({
        'src/vscode/statusBar.ts': "import { verb } from '../core/versionHistory';\nexport const label = verb;\n",
        'src/core/versionHistory.ts': "export { verb } from './git/gitVerb';\n",
        'src/core/git/gitVerb.ts': "import { GitError } from './gitErrors';\nexport const verb = String(GitError);\n",
        'src/core/git/gitErrors.ts': "import { fail } from '../errors';\nexport const GitError = fail;\n",
        'src/core/errors.ts': 'export const fail = 1;\n',
      }),
    );
    assert.equal(r.code, 0, r.err);
  });

  it('fails on an import from the CLI or the extension into an internal of the core, not through the façade', () => {
    const r = check(
      tree({
        'src/vscode/undoButton.ts': "import { plan } from '../core/restore/restorePlan';\nexport const go = plan;\n",
        'src/core/restore/restorePlan.ts': 'export const plan = 1;\n',
      }),
    );
    assert.equal(r.code, 1);
    assert.match(
      r.err,
      /layers\/core-through-facade: src\/vscode\/undoButton\.ts imports src\/core\/restore\/restorePlan\.ts, an internal/,
    );
  });

  it('passes the façade, a named public module, and the hook fast path reaching below the façade', () => {
    const r = check(
      tree({
        'src/cli/commands/undo.ts':
          "import { VersionHistory } from '../../core/versionHistory';\n" +
          "import { resolveRepository } from '../../core/git/repository';\nexport const u = [VersionHistory, resolveRepository];\n",
        'src/core/versionHistory.ts': 'export class VersionHistory {}\n',
        'src/core/git/repository.ts': 'export const resolveRepository = 1;\n',
        'src/cli/hooks/fastHook.ts':
          "import { append } from '../../core/store/journalAppend';\nexport const f = append;\n",
        'src/core/store/journalAppend.ts': 'export const append = 1;\n',
      }),
    );
    assert.equal(r.code, 0, r.err);
  });

  it('fails on a file of src/ that belongs to no layer', () => {
    const r = check(tree({ 'src/newFolder/thing.ts': 'export const thing = 1;\n' }));
    assert.equal(r.code, 1);
    assert.match(r.err, /layers\/unranked-file: src\/newFolder\/thing\.ts belongs to no layer/);
  });
});
