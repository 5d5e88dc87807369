/**
 * Documents the code cites are in the repository (issue 35): comments once cited a product specification and a style
 * guide that a contributor with only the repository does not have. This scans the real files of the repository and
 * fails naming file:line for a citation of the specification ("SPEC §n", "SPEC.md"), of "STYLE.md", or of a `docs/…md`
 * or `bench/…md` path that does not exist. The product contract those comments meant is docs/product-contract.md; the
 * code-shape rules are docs/design.md, "Code shape". A fixture tree with bad citations proves the scan can fail.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

/** Files a citation lives in: code, styles, shell and build scripts (the docs are checked for foreign names only). */
const CODE = /\.(ts|mts|cts|js|mjs|cjs|svelte|sh|css|json)$/;
const SKIP_DIRS = new Set(['node_modules', 'dist', 'out', '.work', 'fixtures', '.vscode-test', 'test-artifacts']);

/** Documents that are not in the repository: the product specification and the style guide it started from. */
const FOREIGN: readonly { pattern: RegExp; what: string }[] = [
  { pattern: /\bSPEC\b/, what: 'SPEC (not in the repository: cite docs/product-contract.md §n)' },
  { pattern: /\bSTYLE\.md\b/, what: 'STYLE.md (not in the repository: cite docs/design.md, "Code shape")' },
];
/** A repository path of a markdown document, as code comments cite them (not preceded by a path character). */
const DOC_PATH = /(?<![\w./-])((?:docs|bench)\/[\w./-]*?\.md)\b/g;

interface Finding {
  readonly file: string;
  readonly line: number;
  readonly cites: string;
}

function filesUnder(root: string, rel: string, accept: (file: string) => boolean): string[] {
  const abs = path.join(root, rel);
  if (!fs.existsSync(abs)) return [];
  if (fs.statSync(abs).isFile()) return accept(rel) ? [rel] : [];
  const out: string[] = [];
  for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
    if (entry.isDirectory() && SKIP_DIRS.has(entry.name)) continue;
    const child = path.posix.join(rel, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(root, child, accept));
    else if (entry.isFile() && accept(child)) out.push(child);
  }
  return out;
}

/**
 * Citations in `files` (repository-relative) of documents `root` does not have: the foreign names always, and, when
 * `paths` is set, `docs/…md` / `bench/…md` paths that do not exist under `root`.
 */
function uncitable(root: string, files: readonly string[], paths: boolean): Finding[] {
  const found: Finding[] = [];
  for (const file of files) {
    const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
    lines.forEach((text, i) => {
      for (const { pattern, what } of FOREIGN) if (pattern.test(text)) found.push({ file, line: i + 1, cites: what });
      if (!paths) return;
      for (const m of text.matchAll(DOC_PATH)) {
        // A file under a dot folder (bench/.work/) is one a program writes, not a document it cites.
        if (m[1].split('/').some((part) => part.startsWith('.'))) continue;
        if (!fs.existsSync(path.join(root, m[1]))) found.push({ file, line: i + 1, cites: `${m[1]} (no such file)` });
      }
    });
  }
  return found;
}

/** Every place of a repository at `root` the guard reads, with whether document paths are checked there. */
function scanRepository(root: string): Finding[] {
  const code = (f: string) => CODE.test(f);
  // test/ holds repository contents as test data (a `docs/notes.md` written into a temporary repository), so only
  // the foreign names are looked for there; this file names them on purpose.
  const self = 'test/unit/citedDocuments.test.ts';
  const tests = filesUnder(root, 'test', (f) => code(f) && f !== self);
  const docs = [
    ...filesUnder(root, 'docs', (f) => f.endsWith('.md')),
    ...['README.md', 'CHANGELOG.md', 'CONTRIBUTING.md', 'bench/RESULTS.md'].filter((f) =>
      fs.existsSync(path.join(root, f)),
    ),
  ];
  return [
    ...uncitable(root, [...filesUnder(root, 'src', code), ...filesUnder(root, 'scripts', code)], true),
    ...uncitable(root, [...filesUnder(root, 'bench', code), ...filesUnder(root, 'eslint.config.mjs', code)], true),
    ...uncitable(root, [...tests, ...docs], false),
  ];
}

const describeFindings = (found: readonly Finding[]) =>
  found.map((f) => `${f.file}:${f.line}: cites ${f.cites}`).join('\n');

describe('documents the code cites are in the repository (real files)', () => {
  it('no file in src/, scripts/, bench/, test/, docs/ or eslint.config.mjs cites a document the repository lacks', () => {
    const found = scanRepository(ROOT);
    assert.deepEqual(found, [], `citations of documents that are not in the repository:\n${describeFindings(found)}`);
  });

  it('the scan reads the real tree: it finds the files it must look at', () => {
    // A scan that silently read nothing would pass the test above; these files exist and carry citations.
    const src = filesUnder(ROOT, 'src', (f) => CODE.test(f));
    assert.ok(src.includes('src/core/domain/restorePhases.ts'), 'src/ was not scanned');
    assert.ok(
      src.some((f) => f.endsWith('.svelte')),
      'the Svelte files were not scanned',
    );
    assert.ok(fs.readFileSync(path.join(ROOT, 'src/core/domain/restorePhases.ts'), 'utf8').includes('docs/'));
    assert.ok(fs.existsSync(path.join(ROOT, 'docs/product-contract.md')));
  });

  it('fails naming file:line for each bad citation in a fixture tree, and passes the good ones', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-cited-docs-'));
    try {
      const write = (rel: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
        fs.writeFileSync(path.join(root, rel), text);
      };
      const spec = ['SP', 'EC'].join(''); // spelled apart so this file's own text never carries the citation
      write('docs/present.md', '# Present\n');
      write('docs/design/note.md', `# A note\n\nAs ${spec} §6 words it.\n`);
      write(
        'src/core/bad.ts',
        [
          `/** The saga (${spec} §5.3), written ahead. */`,
          "const env = { GIT_LITERAL_PATHSPECS: '1' }; // a word that contains the name, not a citation",
          '// Shape rules: STYLE.md, trait 5.',
          '// Decided in docs/present.md; more in docs/absent.md#why and docs/design/gone.md.',
          '// Not a repository path: ../docs/elsewhere.md, https://example.com/docs/web.md',
          '// Written by the program, not cited: bench/.work/RESULTS.quick.md',
          'export const x = env;',
        ].join('\n'),
      );
      write('scripts/setup.sh', `CLAUDE_SDK_${spec}="pkg@1"\n# see ${spec}.md §2\n`);
      write('eslint.config.mjs', '// fine: docs/present.md\n');
      write('test/unit/data.test.ts', `// writes docs/notes.md into a temporary repository (test data); ${spec} §9\n`);
      write('src/view.svelte', `<script>\n  // The list (${spec} §8)\n</script>\n`);

      const found = describeFindings(scanRepository(root)).split('\n').sort();
      assert.deepEqual(found, [
        `docs/design/note.md:3: cites ${spec} (not in the repository: cite docs/product-contract.md §n)`,
        `scripts/setup.sh:2: cites ${spec} (not in the repository: cite docs/product-contract.md §n)`,
        `src/core/bad.ts:1: cites ${spec} (not in the repository: cite docs/product-contract.md §n)`,
        'src/core/bad.ts:3: cites STYLE.md (not in the repository: cite docs/design.md, "Code shape")',
        'src/core/bad.ts:4: cites docs/absent.md (no such file)',
        'src/core/bad.ts:4: cites docs/design/gone.md (no such file)',
        `src/view.svelte:2: cites ${spec} (not in the repository: cite docs/product-contract.md §n)`,
        `test/unit/data.test.ts:1: cites ${spec} (not in the repository: cite docs/product-contract.md §n)`,
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
