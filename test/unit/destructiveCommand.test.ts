/**
 * The classifier of commands that destroy working-tree content (src/cli/hooks/destructiveCommand/, issue 34):
 * one row per command line, destructive ones with their label and whether they reach ignored files, harmless
 * look-alikes and unparseable lines with null; argvs as Codex sends them; huge and deeply nested input.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { targetMatcher } from '../../src/core/turns/checkpointSnapshot';
import {
  classifyArgv,
  classifyShellCommand,
  MAX_CLASSIFIED_CHARS,
  type DestructiveCommand,
} from '../../src/cli/hooks/destructiveCommand';

/** [command line, expected label or null, reachesIgnored (false when omitted)] */
type Row = readonly [string, string | null, boolean?];

const GIT: Row[] = [
  ['git reset --hard', 'git reset --hard'],
  ['git reset --hard HEAD~1', 'git reset --hard'],
  ['git reset --merge', 'git reset --merge'],
  ['git reset --keep origin/main', 'git reset --keep'],
  ['git reset -q --hard', 'git reset --hard'],
  ['git reset --soft HEAD~1', null],
  ['git reset --mixed', null],
  ['git reset', null],
  ['git reset HEAD src/app.ts', null],
  ['git checkout -- .', 'git checkout --'],
  ['git checkout -- src/app.ts', 'git checkout --'],
  ['git checkout HEAD -- src/app.ts', 'git checkout --'],
  ['git checkout .', 'git checkout .'],
  ['git checkout -f', 'git checkout -f'],
  ['git checkout --force main', 'git checkout -f'],
  ['git checkout src/x.ts', 'git checkout <paths>'],
  ['git checkout ./src', 'git checkout <paths>'],
  ['git checkout README.md', 'git checkout <paths>'],
  ['git checkout .env', 'git checkout <paths>'],
  ["git checkout '*.ts'", 'git checkout <paths>'],
  ['git checkout main src/', 'git checkout <paths>'],
  ['git checkout --pathspec-from-file=list.txt', 'git checkout --'],
  ['git checkout -b feature', null],
  ['git checkout -b feature origin/main', null],
  ['git checkout -B feature', null],
  ['git checkout --orphan gh-pages', null],
  ['git checkout main', null],
  ['git checkout feature/login', null],
  ['git checkout v1.2.3', null],
  ['git checkout HEAD~3', null],
  ['git checkout -', null],
  ['git checkout main --', null],
  ['git checkout -p src/app.ts', null],
  ['git restore .', 'git restore'],
  ['git restore src/app.ts', 'git restore'],
  ['git restore --source=HEAD~2 src', 'git restore'],
  ['git restore -s HEAD~2 src', 'git restore'],
  ['git restore --staged --worktree .', 'git restore'],
  ['git restore -SW .', 'git restore'],
  ['git restore --staged src/app.ts', null],
  ['git restore -S .', null],
  ['git restore', null],
  ['git clean -fdx', 'git clean -x', true],
  ['git clean -xdf', 'git clean -x', true],
  ['git clean -ffdx', 'git clean -x', true],
  ['git clean -f -d -x', 'git clean -x', true],
  ['git clean -fX', 'git clean -X', true],
  ['git clean -fd', 'git clean'],
  ['git clean --force', 'git clean'],
  ['git clean -f -e .env', 'git clean'],
  ['git clean -fe x', 'git clean'],
  ['git clean -d', 'git clean'],
  ['git clean -n', null],
  ['git clean -ndx', null],
  ['git clean --dry-run -fdx', null],
  ['git clean -i', null],
  ['git stash', 'git stash'],
  ['git stash push', 'git stash'],
  ['git stash push -m "wip" -- src', 'git stash'],
  ['git stash save "wip"', 'git stash'],
  ['git stash -u', 'git stash -u'],
  ['git stash --include-untracked', 'git stash -u'],
  ['git stash -a', 'git stash --all', true],
  ['git stash push --all', 'git stash --all', true],
  ['git stash -k', 'git stash'],
  ['git stash drop', 'git stash drop'],
  ['git stash drop stash@{1}', 'git stash drop'],
  ['git stash clear', 'git stash clear'],
  ['git stash list', null],
  ['git stash show', null],
  ['git stash show -p', null],
  ['git stash pop', null],
  ['git stash apply', null],
  ['git stash branch fix', null],
  ['git stash -p', null],
  ['git switch -f main', 'git switch -f'],
  ['git switch --force main', 'git switch -f'],
  ['git switch --discard-changes main', 'git switch --discard-changes'],
  ['git switch --orphan fresh', 'git switch --orphan'],
  ['git switch main', null],
  ['git switch -c feature', null],
  ['git switch -', null],
  ['git rebase main', 'git rebase'],
  ['git rebase -i HEAD~3', 'git rebase'],
  ['git rebase --abort', 'git rebase --abort'],
  ['git rebase --skip', 'git rebase --skip'],
  ['git rebase --continue', null],
  ['git merge feature', 'git merge'],
  ['git merge --abort', 'git merge --abort'],
  ['git merge --continue', null],
  ['git pull', 'git pull'],
  ['git pull --rebase origin main', 'git pull'],
  ['git rm src/app.ts', 'git rm'],
  ['git rm -r src', 'git rm'],
  ['git rm --cached .env', null],
  ['git rm -r --cached .', null],
  ['git rm -n src/app.ts', null],
  ['git mv -f a.ts b.ts', 'git mv -f'],
  ['git mv a.ts b.ts', null],
  ['git status', null],
  ['git diff --stat', null],
  ['git add -A && git commit -m "x"', null],
  ['git log --grep "reset --hard"', null],
  ['git commit -m "git reset --hard"', null],
  ['git commit -m "rm -rf build; git clean -fdx"', null],
  ['git branch -D old', null],
  ['git --version', null],
  ['git help reset', null],
];

const GIT_GLOBAL_OPTIONS: Row[] = [
  ['git -C ../other reset --hard', 'git reset --hard'],
  ['git -c core.autocrlf=false checkout -- .', 'git checkout --'],
  ['git --git-dir=.git --work-tree=. clean -fdx', 'git clean -x', true],
  ['git --git-dir .git --work-tree . stash', 'git stash'],
  ['git --no-pager -C sub stash -u', 'git stash -u'],
  ['git -P --literal-pathspecs restore .', 'git restore'],
  ['/usr/bin/git reset --hard', 'git reset --hard'],
  ['git -C dir status', null],
  ['git --unknown-global reset --hard', null],
];

const FILES: Row[] = [
  ['rm -rf build', 'rm -r', true],
  ['rm -r build', 'rm -r', true],
  ['rm -R build', 'rm -r', true],
  ['rm --recursive --force build', 'rm -r', true],
  ['rm -fr node_modules dist', 'rm -r', true],
  ['rm file.txt', 'rm', true],
  ['rm -f .env', 'rm', true],
  ['rm -- -weird-name', 'rm', true],
  ['rm *.log', 'rm', true],
  ['rm build -rf', 'rm -r', true],
  ['rm -i file', null],
  ['rm -ri dir', null],
  ['rm -if file', 'rm', true],
  ['rm -fi file', null],
  ['rm --interactive=never file', 'rm', true],
  ['rm -I a b', 'rm', true],
  ['rm -I a b c d', null],
  ['rm -rI dir', null],
  ['yes | rm -i file', 'rm', true],
  ['rm -i file < answers.txt', 'rm', true],
  ['rm', null],
  ['rm -f', null],
  ['rm --help', null],
  ['rmdir empty', null],
  ['unlink file', 'unlink', true],
  ['npx rimraf dist coverage', 'rimraf', true],
  ['npx --yes -p rimraf rimraf dist', 'rimraf', true],
  ['rimraf', null],
  ['find . -name "*.pyc" -delete', 'find -delete', true],
  ['find build -type f -delete', 'find -delete', true],
  ['find . -name node_modules -prune -exec rm -rf {} +', 'find -exec rm -r', true],
  ['find . -name "*.o" -exec rm {} \\;', 'find -exec rm', true],
  ["find . -type d -execdir rm -r '{}' ';'", 'find -exec rm -r', true],
  ['find . -name x -exec sh -c \'rm -rf "$1"\' _ {} \\;', 'find -exec rm -r', true],
  ['find . -name "*.ts"', null],
  ['find . -name -delete', null],
  ['find . -exec grep -l TODO {} +', null],
  ['find . -ok rm {} \\;', null],
  ['find . -exec rm {}', null],
  ['mv a.ts b.ts', 'mv onto a path', true],
  ['mv -f src/old.ts src/new.ts', 'mv onto a path', true],
  ['mv -t dest a b', 'mv onto a path', true],
  ['cp template.env .env', 'cp onto a path', true],
  ['cp -r src backup', 'cp onto a path', true],
  ['mv -n a b', null],
  ['mv -i a b', null],
  ['cp --no-clobber a b', null],
  ['cp -b a b', null],
  ['cp --backup=none a b', 'cp onto a path', true],
  ['mv a', null],
  ['truncate -s 0 app.log', 'truncate', true],
  ['shred -u secret.key', 'shred', true],
  ['dd if=/dev/zero of=disk.img bs=1M count=1', 'dd of=', true],
  ['dd if=disk.img bs=1M count=1', null],
];

const LISTS_AND_WRAPPERS: Row[] = [
  ['cd web && rm -rf dist', 'rm -r', true],
  ['npm test || git reset --hard', 'git reset --hard'],
  ['echo start; git stash; echo done', 'git stash'],
  ['git status | cat; rm -rf tmp', 'rm -r', true],
  ['git status\ngit checkout -- .', 'git checkout --'],
  ['git fetch &&\n  git reset --hard origin/main', 'git reset --hard'],
  ['yes |\n  rm -i x', 'rm', true],
  ['yes | # answers\n  rm -i x', 'rm', true],
  ['echo x\nrm -i y', null],
  ['(cd sub && git clean -fd)', 'git clean'],
  ['{ git stash; }', 'git stash'],
  ['if ! git diff --quiet; then git stash; fi', 'git stash'],
  ['while read f; do rm "$f"; done < files.txt', 'rm', true],
  ['for f in *.log; do rm "$f"; done', 'rm', true],
  ['cleanup() { rm -rf tmp; }; cleanup', 'rm -r', true],
  ['function f { git stash; }; f', 'git stash'],
  ['function f() {\n  git clean -fd\n}', 'git clean'],
  ['select x in a b; do echo $x; done', null],
  ['sleep 1 & git reset --hard', 'git reset --hard'],
  ['git stash && git clean -fdx', 'git stash', true],
  ['env git reset --hard', 'git reset --hard'],
  ['env -i PATH=/usr/bin GIT_DIR=.git git clean -f', 'git clean'],
  ['env -u HOME -- rm -rf x', 'rm -r', true],
  ['FOO=1 BAR="a b" rm -rf build', 'rm -r', true],
  ['sudo rm -rf /var/cache/app', 'rm -r', true],
  ['sudo -u deploy -E git reset --hard', 'git reset --hard'],
  ['sudo --user=deploy HOME=/x git clean -fdx', 'git clean -x', true],
  ['sudo -l rm -rf x', null],
  ['doas rm -rf x', 'rm -r', true],
  ['command rm -rf x', 'rm -r', true],
  ['command -v rm', null],
  ['exec git reset --hard', 'git reset --hard'],
  ['nohup rm -rf x &', 'rm -r', true],
  ['time git stash', 'git stash'],
  ['time -p rm -r x', 'rm -r', true],
  ['nice -n 10 rm -rf x', 'rm -r', true],
  ['timeout 10 git clean -fdx', 'git clean -x', true],
  ['timeout -s KILL 5s rm -rf x', 'rm -r', true],
  ['stdbuf -oL rm -rfv x', 'rm -r', true],
  ['git ls-files --deleted | xargs rm', 'rm', true],
  ['find . -name "*.tmp" -print0 | xargs -0 rm -f', 'rm', true],
  ['cat list | xargs -I{} rm -rf {}', 'rm -r', true],
  ['git diff --name-only | xargs git checkout --', 'git checkout --'],
  ['ls | xargs', null],
  ['ls | xargs echo rm', null],
  ['xargs rm -i < list', null],
  ['eval "git reset --hard"', 'git reset --hard'],
  ["eval 'echo rm -rf x'", null],
  ['\\rm -rf x', 'rm -r', true],
  ['"rm" -rf x', 'rm -r', true],
  ['! rm -rf x', 'rm -r', true],
  ['busybox rm -rf x', 'rm -r', true],
];

const SHELLS: Row[] = [
  ["sh -c 'git reset --hard'", 'git reset --hard'],
  ['bash -c "rm -rf build"', 'rm -r', true],
  ["bash -lc 'cd app && git clean -fdx'", 'git clean -x', true],
  ["zsh -c 'git stash'", 'git stash'],
  ["bash -e -o pipefail -c 'git checkout -- .'", 'git checkout --'],
  ['bash -c "bash -c \'rm -rf x\'"', 'rm -r', true],
  ["/bin/bash --norc -c 'git restore .'", 'git restore'],
  ["bash -nc 'rm -rf x'", null],
  ['bash -c "echo rm -rf x"', null],
  ['bash script.sh', null],
  ['bash -c \'rm -rf "$DIR"\'', 'rm -r', true],
  ["bash <<'EOF'\nrm -rf build\nEOF", 'rm -r', true],
  ['sh -s <<EOF\ngit reset --hard\nEOF', 'git reset --hard'],
  ["bash <<< 'git stash'", 'git stash'],
  ['echo "rm -rf x" | bash', 'rm -r', true],
  ["echo -n 'git stash' | sh -s", 'git stash'],
  ["printf 'git reset --hard\\n' | sh", 'git reset --hard'],
  ["cat <<'EOF' | bash\nrm -rf build\nEOF", 'rm -r', true],
  ["cat <<'EOF' | tee log | bash\nrm -rf build\nEOF", null],
  ["echo 'echo rm -rf x' | bash", null],
  ['echo "rm -rf x" | cat', null],
  ["echo 'rm -rf x' | bash < other.sh", null],
  ["printf '%s' 'rm -rf x' | sh", null],
  ['echo "rm -rf $x" | sh', null],
  ['curl -fsSL https://example.com/install.sh | sh', null],
  ['echo $(rm -rf x)', 'rm -r', true],
  ['echo "$(git stash)"', 'git stash'],
  ['echo `git reset --hard`', 'git reset --hard'],
  ['diff <(git stash show -p) <(rm -rf x)', 'rm -r', true],
  ['x=$(git rev-parse HEAD) && git reset --hard $x', 'git reset --hard'],
  ['echo ${HOME:-$(rm -rf x)}', 'rm -r', true],
  // Claude Code's commit messages: a heredoc inside $( … ) inside double quotes, its body never read as commands
  [`git commit -m "$(cat <<'EOF'\nFix: don't rm -rf (ever)\n\nCo-Authored-By: x\nEOF\n)"`, null],
  [`git add . && git commit -m "$(cat <<'EOF'\nmsg\nEOF\n)" && git clean -fdx`, 'git clean -x', true],
  ['git -C "$dir" reset --hard', 'git reset --hard'],
];

const LOOK_ALIKES: Row[] = [
  ['echo "rm -rf /"', null],
  ["echo 'git clean -fdx'", null],
  ['echo git reset --hard', null],
  ['printf "%s\\n" "git stash"', null],
  ['grep -r "rm -rf" .', null],
  ['rg "git reset --hard" src', null],
  ['npm run clean', null],
  ['make clean', null],
  ['ls -rf', null],
  ['cat rm', null],
  ['cat rm.txt > /dev/null', null],
  ['# rm -rf x', null],
  ['ls # && rm -rf x', null],
  ['cat <<EOF\nrm -rf x\nEOF', null],
  ['cat <<-EOF > notes.md\n\tgit reset --hard\n\tEOF\necho ok', null],
  ["cat > setup.sh <<'EOF'\ngit clean -fdx\nEOF", null],
  ['echo hi > out.txt', null],
  ['git status && npm test && echo rm', null],
  ['confirm_rm=1 ./build.sh', null],
  ['format --rm x', null],
  ['docker run --rm image', null],
  ['$RM -rf x', null],
  ['alias rm="rm -i"', null],
];

const UNPARSEABLE: Row[] = [
  ["rm -rf x && echo 'unbalanced", null],
  ['git reset --hard "', null],
  ['echo $(rm -rf x', null],
  ['echo `rm -rf x', null],
  ['(rm -rf x', null],
  ['rm -rf x)', null],
  ['case "$1" in clean) rm -rf build;; esac', null],
  ['echo ${x', null],
  ['rm -rf >', null],
];

const ALL_ROWS: Row[] = [...GIT, ...GIT_GLOBAL_OPTIONS, ...FILES, ...LISTS_AND_WRAPPERS, ...SHELLS, ...LOOK_ALIKES];

/** What the tables check: the label and reachesIgnored (onlyOverChanges has its own table). */
function labelled(found: DestructiveCommand | null): Pick<DestructiveCommand, 'label' | 'reachesIgnored'> | null {
  return found === null ? null : { label: found.label, reachesIgnored: found.reachesIgnored };
}

function expectRow([command, label, reachesIgnored]: Row, actual: DestructiveCommand | null): void {
  const expected = label === null ? null : { label, reachesIgnored: reachesIgnored ?? false };
  assert.deepEqual(labelled(actual), expected, JSON.stringify(command));
}

describe('destructive command classifier: shell command lines', () => {
  it('has at least 80 rows, harmless and destructive', () => {
    const rows = [...ALL_ROWS, ...UNPARSEABLE];
    assert.ok(rows.length >= 80, `${rows.length} rows`);
    assert.ok(rows.filter((row) => row[1] === null).length >= 60);
    assert.ok(rows.filter((row) => row[1] !== null).length >= 100);
  });

  const tables: Array<[string, Row[]]> = [
    ['git subcommands', GIT],
    ['git global options before the subcommand', GIT_GLOBAL_OPTIONS],
    ['rm, find, mv, cp, truncate, shred, dd', FILES],
    ['lists, pipelines, compound commands and wrappers', LISTS_AND_WRAPPERS],
    ['shells (-c, heredocs) and substitutions', SHELLS],
    ['harmless look-alikes (quoted text, comments, heredoc bodies, other programs)', LOOK_ALIKES],
    ['unparseable lines (never guessed)', UNPARSEABLE],
  ];
  for (const [title, rows] of tables) {
    it(title, () => {
      for (const row of rows) expectRow(row, classifyShellCommand(row[0]));
    });
  }

  it('onlyOverChanges: set only when every destructive sub-command destroys nothing over a clean tree', () => {
    const rows: Array<[string, boolean]> = [
      ['git pull', true],
      ['git pull --rebase origin main', true],
      ['git merge feature', true],
      ['git rebase main', true],
      ['git rebase --abort', true],
      ['mv a.txt b.txt', true],
      ['cp -r src/ backup/', true],
      ['cp .env.example .env', true],
      ['git fetch && git rebase origin/main', true],
      ['git pull && mv a b', true],
      ['git reset --hard', false],
      ['git stash', false],
      ['rm -rf build', false],
      ['git pull && rm -rf build', false],
      ['rm -rf build; git pull', false],
      ['git clean -fdx && git pull', false],
      ['find . -name "*.orig" -exec mv {} /tmp \\;', true],
    ];
    for (const [command, expected] of rows)
      assert.equal(classifyShellCommand(command)?.onlyOverChanges, expected, command);
    assert.equal(classifyArgv(['git', 'pull'])?.onlyOverChanges, true);
    assert.equal(classifyArgv(['bash', '-lc', 'git pull && git reset --hard'])?.onlyOverChanges, false);
  });

  it('the label never carries the paths or values of the command', () => {
    for (const [command, label] of ALL_ROWS) {
      if (label === null) continue;
      for (const secret of ['build', 'src', 'app.ts', 'deploy', 'feature', 'wip', 'HEAD~', '.env', 'list']) {
        if (command.includes(secret)) assert.ok(!label.includes(secret), `${label} from ${command}`);
      }
    }
  });

  it('bad input: not a string, empty, blank, a NUL', () => {
    assert.equal(classifyShellCommand(undefined as unknown as string), null);
    assert.equal(classifyShellCommand(42 as unknown as string), null);
    assert.equal(classifyShellCommand(''), null);
    assert.equal(classifyShellCommand('   \n\t'), null);
    assert.equal(classifyShellCommand('rm\0 -rf x'), null);
  });
});

describe('destructive command classifier: argvs (Codex sends shell argvs and plain ones)', () => {
  const rows: Array<readonly [readonly string[], string | null, boolean?]> = [
    [['bash', '-lc', 'git reset --hard'], 'git reset --hard'],
    [['/bin/zsh', '-lc', 'cd app && rm -rf dist'], 'rm -r', true],
    [['sh', '-c', "echo 'rm -rf x'"], null],
    [['zsh', '-lc', 'echo hi'], null],
    // Codex's apply_patch through a shell: the heredoc body is the patch, data
    [
      ['bash', '-lc', "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.sh\n+rm -rf build\n*** End Patch\nEOF"],
      null,
    ],
    [['git', 'clean', '-fdx'], 'git clean -x', true],
    [['git', 'reset', '--hard'], 'git reset --hard'],
    [['git', 'stash', 'list'], null],
    [['rm', '-rf', 'build dir'], 'rm -r', true],
    [['rm', '-i', 'x'], null],
    [['git', 'checkout', 'my file.txt'], 'git checkout <paths>'],
    [['git', 'commit', '-m', 'rm -rf x; git reset --hard'], null],
    [['echo', 'rm', '-rf', 'x'], null],
    [['sudo', 'git', 'reset', '--hard'], 'git reset --hard'],
    // argv words are not shell words: no reserved words, no assignments, no expansions
    [['then', 'rm', '-rf', 'x'], null],
    [['FOO=1', 'rm', '-rf', 'x'], null],
    [['rm', '-rf', '$(echo x)'], 'rm -r', true],
    [[], null],
  ];
  it('classifies each argv', () => {
    for (const [argv, label, reachesIgnored] of rows) {
      const expected = label === null ? null : { label, reachesIgnored: reachesIgnored ?? false };
      assert.deepEqual(labelled(classifyArgv(argv)), expected, JSON.stringify(argv));
    }
  });

  it('bad input: not an array, a non-string element, too long', () => {
    assert.equal(classifyArgv('git reset --hard' as unknown as string[]), null);
    assert.equal(classifyArgv(['git', 42 as unknown as string, '--hard']), null);
    assert.equal(classifyArgv(['rm', '-rf', 'x'.repeat(MAX_CLASSIFIED_CHARS)]), null);
  });
});

// Hostile sizes and shapes: the answers here; what they cost is measured in `npm run bench` (tool-writes section).
describe('destructive command classifier: hostile sizes, targets, build folders', () => {
  it('a 1 MB command is not parsed (null), one just under 64 KiB is', () => {
    const huge = 'git reset --hard && ' + 'x'.repeat(1024 * 1024);
    assert.equal(classifyShellCommand(huge), null);
    const under = 'echo ' + 'x'.repeat(MAX_CLASSIFIED_CHARS - 30) + ' && rm -rf y';
    assert.ok(under.length <= MAX_CLASSIFIED_CHARS);
    assert.deepEqual(classifyShellCommand(under), {
      label: 'rm -r',
      reachesIgnored: true,
      onlyOverChanges: false,
      ignoredTargets: ['y'],
    });
  });

  it('only git clean -x/-X reaches dependency and build folders, wherever it is in the line; rm -rf build does not', () => {
    const reaches = (line: string) => classifyShellCommand(line)?.reachesBuildFolders === true;
    for (const line of ['git clean -fdx', 'git clean -fX', 'git stash && git clean -xdf', 'sh -c "git clean -ffdx"'])
      assert.equal(reaches(line), true, line);
    for (const line of ['git clean -fd', 'rm -rf build node_modules', 'git reset --hard', 'find . -delete'])
      assert.equal(reaches(line), false, line);
    assert.equal(classifyArgv(['bash', '-lc', 'git clean -fdx'])?.reachesBuildFolders, true);
    assert.equal(
      classifyShellCommand('find . -name x -exec git clean -fdx \\;')?.reachesBuildFolders,
      true,
      'through find -exec',
    );
  });

  it('rm names its targets when every command reaching ignored files is an rm of literal paths; otherwise none', () => {
    const targets = (line: string) => classifyShellCommand(line)?.ignoredTargets;
    assert.deepEqual(targets('rm -rf logs'), ['logs']);
    assert.deepEqual(targets('rm -f a.txt "b c.txt" && rm -r ./tmp/x'), ['a.txt', 'b c.txt', './tmp/x']);
    assert.deepEqual(targets('git reset --hard && rm -rf dist/cache'), ['dist/cache'], 'reset reaches no ignored file');
    assert.deepEqual(targets('sudo rm -rf /tmp/x'), ['/tmp/x']);
    assert.deepEqual(targets('sh -c "rm -rf logs"'), ['logs']);
    assert.deepEqual(targets('rm -rf "*.log"'), ['*.log'], 'a quoted star is a file name');
    for (const line of [
      'rm -rf *.log', // a glob
      'rm -rf $DIR', // an expansion
      'rm -rf {a,b}', // a brace list
      'rm -rf ~/x', // a home folder
      'rm -rf logs && git clean -fdx', // another command reaching ignored files names none
      'git clean -fX && rm -rf logs',
      'cp a.txt .env && rm -rf logs', // a copy onto a path names no target
      'find . -name x -exec rm {} \\;',
      'ls | xargs rm',
    ])
      assert.equal(targets(line), undefined, line);
    assert.deepEqual(classifyArgv(['rm', '-rf', '*.log'])?.ignoredTargets, ['*.log'], 'an argv runs no shell: no glob');
  });

  it('targetMatcher: by the last name of a relative path, from any folder; exact when absolute inside; all when unsure', () => {
    const root = '/home/u/repo';
    const match = targetMatcher(root, ['logs', './tmp/x', '../app/cache', '/home/u/repo/out/a.txt'])!;
    for (const file of ['logs', 'logs/app.log', 'src/logs/app.log', 'tmp/x', 'a/x/y', 'cache/1', 'out/a.txt'])
      assert.equal(match(file), true, file);
    for (const file of ['.env', 'logsx/app.log', 'mylogs', 'tmp/xy', 'a/out/a.txt', 'out/a.txt2'])
      assert.equal(match(file), false, file);
    for (const targets of [['.'], ['..'], ['src/..'], ['logs', '/home/u/repo'], ['/elsewhere/repo/x'], ['a/../..']])
      assert.equal(targetMatcher(root, targets), null, targets.join(' '));
  });

  it('10,000 segments `a && a && …`: the destructive one last is found, none is none', () => {
    const segments = (last: string) => Array.from({ length: 9999 }, () => 'a').join(' && ') + ' && ' + last;
    assert.deepEqual(classifyShellCommand(segments('rm -rf x')), {
      label: 'rm -r',
      reachesIgnored: true,
      onlyOverChanges: false,
      ignoredTargets: ['x'],
    });
    assert.equal(classifyShellCommand(segments('rm')), null);
    assert.equal(classifyShellCommand(Array.from({ length: 10000 }, () => 'rm').join('|')), null);
  });

  it('deep nesting stops at the depth limit (null), without exhausting the stack', () => {
    const depth = 5000;
    assert.equal(classifyShellCommand('echo ' + '$('.repeat(depth) + 'rm -rf x' + ')'.repeat(depth)), null);
    for (const open of ['${', '"${', '<(', '$(echo "']) {
      assert.equal(classifyShellCommand('rm x ' + open.repeat(depth)), null, open);
    }
    assert.deepEqual(classifyShellCommand('rm ' + '${x:-'.repeat(8) + '}'.repeat(8)), {
      label: 'rm',
      reachesIgnored: true,
      onlyOverChanges: false,
    });
    const shells = "bash -c 'rm -rf x'";
    let nested = shells;
    for (let k = 0; k < 12; k++) nested = `bash -c ${JSON.stringify(nested)}`;
    assert.equal(classifyShellCommand(nested), null);
    assert.deepEqual(classifyShellCommand(`bash -c ${JSON.stringify(shells)}`), {
      label: 'rm -r',
      reachesIgnored: true,
      onlyOverChanges: false,
      ignoredTargets: ['x'],
    });
    // wrappers chain without limit in the text: past 16 the command counts as unknown, without recursing further
    assert.deepEqual(classifyShellCommand('sudo env nice -n 5 timeout 9 nohup time stdbuf -oL rm -rf x'), {
      label: 'rm -r',
      reachesIgnored: true,
      onlyOverChanges: false,
      ignoredTargets: ['x'],
    });
    assert.equal(classifyShellCommand('sudo '.repeat(12000) + 'rm -rf x'), null);
    assert.equal(classifyShellCommand('xargs '.repeat(10000) + 'rm'), null);
    assert.equal(classifyShellCommand('find . -exec '.repeat(5000) + 'rm x' + ' ;'.repeat(5000)), null);
    assert.equal(classifyArgv([...Array.from({ length: 12000 }, () => 'env'), 'rm', '-rf', 'x']), null);
    assert.deepEqual(classifyShellCommand('('.repeat(20000) + 'rm -rf x' + ')'.repeat(20000)), {
      label: 'rm -r',
      reachesIgnored: true,
      onlyOverChanges: false,
      ignoredTargets: ['x'],
    });
  });

  it('random token soup never throws and only ever returns a known label', () => {
    const tokens = [
      'git',
      'reset',
      '--hard',
      'rm',
      '-rf',
      'x',
      '"',
      "'",
      '$(',
      ')',
      '(',
      '`',
      '&&',
      '|',
      ';',
      '\n',
      'bash',
      '-c',
      'xargs',
      'find',
      '-delete',
      '-exec',
      '\\;',
      '<<EOF',
      'EOF',
      '{',
      '}',
      '${',
      'clean',
      '-fdx',
      'stash',
      'sudo',
      'env',
      'A=1',
      '#',
      '\\',
      'checkout',
      '--',
      '.',
      'mv',
      'cp',
      '>',
      '2>&1',
      '<(',
      'eval',
      'case',
      ';;',
    ];
    const labels = new Set<string>();
    for (const [, label] of ALL_ROWS) if (label !== null) labels.add(label);
    let seed = 34;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let round = 0; round < 3200; round++) {
      // mostly short lines; every 16th one long (nesting and wrapper chains thousands deep)
      const length = 1 + Math.floor(random() * (round % 16 === 0 ? 6000 : 14));
      let line = '';
      for (let k = 0; k < length; k++)
        line += tokens[Math.floor(random() * tokens.length)] + (random() < 0.8 ? ' ' : '');
      const found = classifyShellCommand(line);
      if (found !== null) {
        const known = labels.has(found.label) || labels.has(found.label.replace(/^find -exec /, ''));
        assert.ok(known, `${found.label} from ${JSON.stringify(line)}`);
        assert.equal(typeof found.reachesIgnored, 'boolean');
      }
    }
  });

  it('the module folder imports nothing at run time but its own files and its first test, which imports nothing (both are loaded for every shell tool call)', () => {
    const runtimeImports = (file: string) => {
      const source = fs.readFileSync(path.join(__dirname, '../../../src/cli/hooks', file), 'utf8');
      assert.ok(!/\brequire\(/.test(source), file);
      // the module each runtime import or re-export names (an import written over several lines counts once)
      return [...source.matchAll(/^\s*(import|export)\b(?!\s+type\b)[^;]*?\bfrom\s*'([^']+)'/gm)].map((m) => m[2]);
    };
    const folder = 'destructiveCommand';
    const outside = new Set<string>();
    for (const file of fs.readdirSync(path.join(__dirname, '../../../src/cli/hooks', folder))) {
      for (const from of runtimeImports(path.join(folder, file))) if (!/^\.\/\w+$/.test(from)) outside.add(from);
    }
    assert.deepEqual([...outside], ['../commandMentions']);
    assert.deepEqual(runtimeImports('commandMentions.ts'), []);
  });
});
