/**
 * Issue 15 bench: what the secret check (listing the paths new to versions, then scanning them by name and,
 * under 1 MB, by content) adds to a version commit of 100 new files on the 20k-file bench repository.
 *
 * Two variants alternate in one loop on the same repository and the same edit: the product's own snapshot step
 * (`snapshotWorkingTree`: `add -u --sparse` beside `ls-files --others`, the filters, `update-index --add`,
 * `write-tree`) with the version filters, the secret check timed on its own inside it, and the same function with
 * a secrets filter that finds nothing without looking, each followed by the same commit-tree, compare-and-set
 * update-ref and index install. `endTurn` on the same edit is timed too, for the share of a whole turn end.
 *
 * Run alone: `npx tsc -p . && node out/bench/secretsBench.js` (AVH_BENCH_QUICK=1 for a 2k-file repository); it
 * prints its section (bench/index.ts writes RESULTS.md).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runGit } from '../src/core/git/gitRunner';
import { GitRepository, resolveRepository } from '../src/core/git/repository';
import {
  compareAndSetRef,
  createCommit,
  installIndex,
  snapshotWorkingTree,
  TemporaryIndex,
  VERSION_FILTERS,
} from '../src/core/git/workingTree';
import { scanForSecrets } from '../src/core/git/secretScanner';
import { VersionHistory } from '../src/core/versionHistory';
import { assertClean, BenchRepo, buildRepo, median, ms, now, percentile, resetTo } from './benchUtil';

const SECTION_START = '<!-- secrets-bench:start -->';
const SECTION_END = '<!-- secrets-bench:end -->';
const NEW_FILES = 100;

/** 100 new files of ordinary text (the bench's own pseudo-random content), spread across the tree. */
function writeNewFiles(repo: BenchRepo, tag: string): string[] {
  const step = Math.floor((repo.files.length - 1) / NEW_FILES);
  const created: string[] = [];
  for (let k = 0; k < NEW_FILES; k++) {
    const sibling = repo.files[k * step + 5];
    const rel = `${path.posix.dirname(sibling)}/new${String(k).padStart(3, '0')}.ts`;
    const body = fs.readFileSync(path.join(repo.dir, sibling));
    fs.writeFileSync(path.join(repo.dir, rel), Buffer.concat([Buffer.from(`// ${tag}\n`), body]));
    created.push(rel);
  }
  return created;
}

/**
 * The version commit steps of endTurn after its health checks: the product's snapshot step with the version filters
 * (`check`: the secret check timed on its own inside it) or with a secrets filter that looks at nothing.
 */
async function versionCommit(repo: GitRepository, check: boolean): Promise<{ totalMs: number; checkMs: number }> {
  let checkMs = 0;
  const t0 = now();
  const index = TemporaryIndex.create(repo);
  try {
    const { tree, excluded } = await snapshotWorkingTree(repo, index, {
      large: VERSION_FILTERS.large,
      secrets: async (r, candidates) => {
        if (!check) return [];
        const c0 = now();
        const found = await VERSION_FILTERS.secrets(r, candidates);
        checkMs = now() - c0;
        return found;
      },
    });
    if (excluded.length > 0) throw new Error('bench: ordinary files were left out');
    const head = (await runGit(repo.root, ['rev-parse', 'HEAD'])).stdout.trim();
    const commit = await createCommit(repo, { tree, parents: [head], message: 'bench: 100 new files\n' });
    await compareAndSetRef(repo, 'refs/heads/main', commit, head, 'bench');
    if (!installIndex(repo, index)) throw new Error('bench: index not installed');
    return { totalMs: now() - t0, checkMs };
  } finally {
    index.dispose();
  }
}

const cell = (values: readonly number[]) =>
  `${ms(median(values))} / ${ms(percentile(values, 99))} / ${ms(Math.min(...values))}`;

export interface SecretsBenchResult {
  markdown: string;
  goal: { measure: string; goal: string; measured: string; pass: boolean };
}

export async function runSecretsBench(
  workDir: string,
  quick: boolean,
  progress: (line: string) => void,
): Promise<SecretsBenchResult> {
  const load = () =>
    os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(', ');
  const loadBefore = load();
  const fileCount = quick ? 2_000 : 20_000;
  const reps = quick ? 3 : 15;
  progress(`secrets bench: building a ${fileCount}-file repository…`);
  const repo = await buildRepo(path.join(workDir, 'secrets-bench'), fileCount, 10_240);
  const gitRepo = await resolveRepository(repo.dir);
  const history = await VersionHistory.open(repo.dir);
  const withCheck: number[] = [];
  const without: number[] = [];
  const endTurn: number[] = [];
  const scanOnly: number[] = [];
  const checkOnly: number[] = [];
  try {
    for (let rep = -1; rep < reps; rep++) {
      const order = rep % 2 === 0 ? [true, false] : [false, true];
      for (const check of order) {
        await resetTo(repo, repo.base);
        writeNewFiles(repo, `${check ? 'with' : 'without'} ${rep}`);
        const { totalMs, checkMs } = await versionCommit(gitRepo, check);
        if (rep >= 0) {
          (check ? withCheck : without).push(totalMs);
          if (check) checkOnly.push(checkMs);
        }
        await assertClean(repo.dir);
      }
      await resetTo(repo, repo.base);
      const { turnId } = await history.beginTurn({ chatId: 'secrets-bench', prompt: `bench ${rep}` });
      const created = writeNewFiles(repo, `turn ${rep}`);
      const t0 = now();
      const end = await history.endTurn(turnId, 'completed');
      const t1 = now();
      if (!end.version || end.excluded.length > 0) throw new Error('bench: endTurn did not version the 100 files');
      // The scanner alone on the same 100 files (warm cache, as inside the commit): its share of the check.
      const t2 = now();
      scanForSecrets(
        repo.dir,
        created.map((p) => ({ path: p, mode: '100644' })),
      );
      const t3 = now();
      if (rep >= 0) {
        endTurn.push(t1 - t0);
        scanOnly.push(t3 - t2);
      }
    }
    // The check really runs on this path: a key file among the new files is left out, and never hashed.
    await resetTo(repo, repo.base);
    writeNewFiles(repo, 'proof');
    const secret = 'TOKEN=secrets-bench-proof\n';
    fs.writeFileSync(path.join(repo.dir, 'pkg000', '.env'), secret);
    const index = TemporaryIndex.create(gitRepo);
    try {
      const { excluded } = await snapshotWorkingTree(gitRepo, index, VERSION_FILTERS);
      if (excluded.map((f) => f.path).join() !== 'pkg000/.env') throw new Error('bench: the secret check did not run');
      const oid = (await runGit(repo.dir, ['hash-object', '--stdin'], { input: secret })).stdout.trim();
      const stored = await runGit(repo.dir, ['cat-file', '-e', oid], { okCodes: [1, 128] });
      if (stored.code === 0) throw new Error('bench: the left-out secret was hashed');
    } finally {
      index.dispose();
    }
  } finally {
    await history.close();
    fs.rmSync(repo.dir, { recursive: true, force: true });
  }
  // The check timed on its own inside each commit (direct), and the two variants' medians (A/B, noisier).
  const added = median(checkOnly);
  const share = added / median(without);
  const abDelta = median(withCheck) - median(without);
  const bestShare = Math.min(...checkOnly) / Math.min(...without);
  const markdown = [
    SECTION_START,
    '## Secret check in version commits (issue 15)',
    '',
    `A ${fileCount}-file repository (the bench builder's layout, ~10 KiB text files). Each repetition resets to the ` +
      `base commit (untimed) and writes ${NEW_FILES} new ordinary text files spread over the tree (every one is ` +
      'listed as new to versions and read by the content scan), then times the version commit: through ' +
      '`snapshotWorkingTree` with the version filters, or the same function with a secrets filter that looks at ' +
      'nothing. The two alternate in one loop ' +
      `(order swapped every repetition), ${reps} timed repetitions each after one warm-up. \`endTurn\` on the same ` +
      'edit (store writes included) is timed in the same loop for context.',
    '',
    `Load average (1, 5, 15 min) at start: ${loadBefore}; at end: ${load()} (${os.cpus().length} cores; other processes shared the machine).`,
    '',
    '| variant | p50 / p99 / min |',
    '|---|---:|',
    `| version commit with the secret check (\`snapshotWorkingTree\` + commit) | ${cell(withCheck)} |`,
    `| the same function without the check | ${cell(without)} |`,
    `| — the check alone, timed inside each commit with it | ${cell(checkOnly)} |`,
    `| — the scanner alone on the ${NEW_FILES} files (name + content rules) | ${cell(scanOnly)} |`,
    `| \`endTurn\` (whole turn end, same edit) | ${cell(endTurn)} |`,
    `| **added by the check (p50 of the check / p50 of the commit without it)** | **${ms(added)} = ${(share * 100).toFixed(1)}%** (best runs: ${(bestShare * 100).toFixed(1)}%; A/B difference of the medians: ${ms(abDelta)}) |`,
    '',
    'The check starts no git process when nothing looks like a secret: it scans the new files `ls-files --others` ' +
      'listed before anything hashed them; a finding costs one `ls-files --with-tree=HEAD` of the findings and an ' +
      '`info/exclude` write (not in this measurement: ordinary files make no finding).',
    SECTION_END,
  ].join('\n');
  return {
    markdown,
    goal: {
      measure: `secret check added to a ${NEW_FILES}-new-file version commit (${fileCount} files)`,
      goal: '≤ 5%',
      measured: `${(share * 100).toFixed(1)}% (${ms(added)})`,
      pass: share <= 0.05,
    },
  };
}

if (require.main === module) {
  const quick = process.env.AVH_BENCH_QUICK === '1';
  const root = path.resolve(__dirname, '..', '..');
  const workDir = path.join(root, 'bench', '.work', `secrets-${process.pid}`);
  fs.mkdirSync(workDir, { recursive: true });
  runSecretsBench(workDir, quick, (line) => process.stderr.write(`[secrets bench] ${line}\n`))
    .then(({ markdown, goal }) => {
      process.stdout.write(
        `${markdown}\n\nGoal: ${goal.measure}: ${goal.measured} (${goal.goal}) ${goal.pass ? 'met' : 'MISSED'}\n`,
      );
    })
    .catch((error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    })
    .finally(() => fs.rmSync(workDir, { recursive: true, force: true }));
}
