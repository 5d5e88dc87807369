// Builds a "history pack" for test/unit/historyReplay.test.ts: the last commits of a real repository's first-parent
// history, rewritten as a linear chain of commits whose trees keep only the paths those commits touch (plus every
// .gitignore and .gitattributes, which decide what a version records), written as one git bundle. Modes, symlinks and
// binary blobs are kept byte for byte; gitlinks (submodules) are left out (a turn never writes one). Each rewritten
// commit keeps its author, committer, dates and message, plus an `Original-Commit:` line naming the commit it is.
//
//   node scripts/buildHistoryPack.mjs --mirror <git dir> --name <pack> [--count 100] [--rev HEAD] [--out <dir>]
//
// --count is the number of commits replayed as turns; the pack holds one more, the state the replay starts from.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function parseArgs(argv) {
  const args = { count: 100, rev: 'HEAD', out: path.join(root, 'test/fixtures/histories') };
  for (let i = 0; i < argv.length; i += 2) {
    const [key, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${key} needs a value`);
    if (key === '--mirror') args.mirror = value;
    else if (key === '--name') args.name = value;
    else if (key === '--count') args.count = Number(value);
    else if (key === '--rev') args.rev = value;
    else if (key === '--out') args.out = value;
    else throw new Error(`unknown option ${key}`);
  }
  if (!args.mirror || !args.name || !(args.count > 0)) {
    throw new Error('usage: buildHistoryPack.mjs --mirror <git dir> --name <pack> [--count N] [--rev R] [--out D]');
  }
  return args;
}

const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0' };

function git(gitDir, args, options = {}) {
  return execFileSync('git', [`--git-dir=${gitDir}`, ...args], {
    encoding: options.encoding ?? 'utf8',
    env: { ...gitEnv, ...options.env },
    input: options.input,
    maxBuffer: 512 * 1024 * 1024,
  });
}

/** `git ls-tree -r -z` as entries { mode, oid, path }. */
function treeEntries(gitDir, commit) {
  return git(gitDir, ['ls-tree', '-r', '-z', '--full-tree', commit])
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf('\t');
      const [mode, , oid] = line.slice(0, tab).split(' ');
      return { mode, oid, path: line.slice(tab + 1) };
    });
}

/** Paths that differ between two commits (no rename detection: a rename touches both of its paths). */
function touchedPaths(gitDir, from, to) {
  return git(gitDir, ['diff-tree', '-r', '-z', '--no-renames', '--name-only', from, to]).split('\0').filter(Boolean);
}

const keptAlways = (file) => ['.gitignore', '.gitattributes'].includes(path.posix.basename(file));

function commitFields(gitDir, commit) {
  const raw = git(gitDir, ['cat-file', 'commit', commit]);
  const split = raw.indexOf('\n\n');
  const header = raw.slice(0, split).split('\n');
  const person = (kind) => {
    const line = header.find((l) => l.startsWith(`${kind} `)).slice(kind.length + 1);
    const m = /^(.*) <(.*)> (\d+ [+-]\d{4})$/.exec(line);
    return { name: m[1], email: m[2], date: m[3] };
  };
  return { author: person('author'), committer: person('committer'), message: raw.slice(split + 2) };
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const mirror = path.resolve(args.mirror);
  const chain = git(mirror, ['rev-list', '--first-parent', '-n', String(args.count + 1), args.rev])
    .split('\n')
    .filter(Boolean)
    .reverse();
  if (chain.length < 2) throw new Error('the history has fewer than two commits');

  const kept = new Set();
  for (let i = 1; i < chain.length; i++)
    for (const file of touchedPaths(mirror, chain[i - 1], chain[i])) kept.add(file);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-history-pack-'));
  try {
    const packDir = path.join(work, 'pack.git');
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', packDir], { env: gitEnv });
    // The mirror's objects are read through an alternate; `git bundle` then copies the ones the pack needs.
    fs.writeFileSync(path.join(packDir, 'objects/info/alternates'), `${path.join(mirror, 'objects')}\n`);
    const index = path.join(work, 'index');
    let parent = null;
    let written = 0;
    for (const commit of chain) {
      const entries = treeEntries(mirror, commit).filter(
        (e) => e.mode !== '160000' && (kept.has(e.path) || keptAlways(e.path)),
      );
      fs.rmSync(index, { force: true });
      const indexInfo = entries.map((e) => `${e.mode} ${e.oid}\t${e.path}\0`).join('');
      git(packDir, ['update-index', '-z', '--index-info'], { input: indexInfo, env: { GIT_INDEX_FILE: index } });
      const tree = git(packDir, ['write-tree'], { env: { GIT_INDEX_FILE: index } }).trim();
      const { author, committer, message } = commitFields(mirror, commit);
      const body = `${message.replace(/\n*$/, '')}\n\nOriginal-Commit: ${commit}\n`;
      const next = git(packDir, ['commit-tree', tree, ...(parent ? ['-p', parent] : [])], {
        input: body,
        env: {
          GIT_AUTHOR_NAME: author.name,
          GIT_AUTHOR_EMAIL: author.email,
          GIT_AUTHOR_DATE: author.date,
          GIT_COMMITTER_NAME: committer.name,
          GIT_COMMITTER_EMAIL: committer.email,
          GIT_COMMITTER_DATE: committer.date,
        },
      }).trim();
      // A commit whose kept paths did not change (a gitlink bump, say) would be a turn that changed nothing: skip it.
      if (parent && git(packDir, ['rev-parse', `${parent}^{tree}`]).trim() === tree) continue;
      parent = next;
      written++;
    }
    git(packDir, ['update-ref', 'refs/heads/main', parent]);
    fs.mkdirSync(args.out, { recursive: true });
    const out = path.join(args.out, `${args.name}.bundle`);
    git(packDir, ['bundle', 'create', '-q', out, 'refs/heads/main']);
    const size = fs.statSync(out).size;
    console.log(
      `${path.relative(root, out)}: ${written} commits (${chain[0].slice(0, 12)}..${chain.at(-1).slice(0, 12)}), ` +
        `${kept.size} paths, ${(size / 1024).toFixed(0)} KiB`,
    );
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main();
