/**
 * Issue 15 bench: what the secret check (listing the paths new to versions, then scanning them by name and,
 * under 1 MB, by content) adds to a version commit of 100 new files on the 20k-file bench repository.
 *
 * Two variants alternate in one loop on the same repository and the same edit: the product's own snapshot step
 * (`snapshotWorkingTree`, the body of `writeWorkingTree`: `add -A --verbose`, the filters, `write-tree`) with the
 * version filters as they are, the secret check timed on its own, and the same step with the secret filter replaced by
 * one that finds nothing; each followed by the same commit-tree, compare-and-set update-ref and index install. So
 * the only difference is the check (no copy of the product's steps to drift from it). `endTurn` on the same edit is
 * timed too, for the share of a whole turn end.
 *
 * Run alone: `npx tsc -p . && node out/bench/secretsBench.js` (AVH_BENCH_QUICK=1 for a 2k-file repository);
 * it replaces its section in bench/RESULTS.md (quick mode: prints only).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runGit } from '../src/core/git/gitRunner';
import { excludeLargeFiles } from '../src/core/git/heavyFolders';
import { GitRepository, resolveRepository } from '../src/core/git/repository';
import {
  compareAndSetRef,
  createCommit,
  installIndex,
  TemporaryIndex,
  writeWorkingTree,
} from '../src/core/git/workingTree';
import { snapshotWorkingTree, type SnapshotFilters } from '../src/core/git/workingTreeSnapshot';
import { excludeNewSecretPaths, secretsLeftOutOf } from '../src/core/git/secretExclusion';
import { scanForSecrets } from '../src/core/secrets/secretScanner';
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
 * (`check`: the secret filter as it is, timed on its own; without: a secret filter that finds nothing), then the
 * commit, the branch move and the index install.
 */
async function versionCommit(repo: GitRepository, check: boolean): Promise<{ totalMs: number; checkMs: number }> {
  let checkMs = 0;
  const filters: SnapshotFilters = {
    secrets: check
      ? async (...args) => {
          const c0 = now();
          const found = await excludeNewSecretPaths(...args);
          checkMs = now() - c0;
          return found;
        }
      : async () => [],
    large: excludeLargeFiles,
  };
  const t0 = now();
  const index = TemporaryIndex.create(repo);
  try {
    const { tree, excluded } = await snapshotWorkingTree(repo, index, filters);
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
    // The check really runs on this path: a key file among the new files is left out.
    await resetTo(repo, repo.base);
    writeNewFiles(repo, 'proof');
    fs.writeFileSync(path.join(repo.dir, 'pkg000', '.env'), 'TOKEN=x\n');
    const index = TemporaryIndex.create(gitRepo);
    try {
      await writeWorkingTree(gitRepo, index);
      if (
        secretsLeftOutOf(index)
          .map((f) => f.path)
          .join() !== 'pkg000/.env'
      )
        throw new Error('bench: the secret check did not run');
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
      'listed as new to versions and read by the content scan), then times the version commit: through the ' +
      "product's snapshot step with its filters (with the check), or the same step with a secret filter that finds " +
      'nothing (both run `add -A --verbose`). The two alternate in one loop ' +
      `(order swapped every repetition), ${reps} timed repetitions each after one warm-up. \`endTurn\` on the same ` +
      'edit (store writes included) is timed in the same loop for context.',
    '',
    `Load average (1, 5, 15 min) at start: ${loadBefore}; at end: ${load()} (${os.cpus().length} cores; other processes shared the machine).`,
    '',
    '| variant | p50 / p99 / min |',
    '|---|---:|',
    `| version commit with the secret check (the product's snapshot step, \`writeWorkingTree\`'s body) | ${cell(withCheck)} |`,
    `| the same step with a secret filter that finds nothing | ${cell(without)} |`,
    `| — the check alone, timed inside each commit with it | ${cell(checkOnly)} |`,
    `| — the scanner alone on the ${NEW_FILES} files (name + content rules) | ${cell(scanOnly)} |`,
    `| \`endTurn\` (whole turn end, same edit) | ${cell(endTurn)} |`,
    `| **added by the check (p50 of the check / p50 of the commit without it)** | **${ms(added)} = ${(share * 100).toFixed(1)}%** (best runs: ${(bestShare * 100).toFixed(1)}%; A/B difference of the medians: ${ms(abDelta)}) |`,
    '',
    'The check starts no git process when nothing looks like a secret: it reads the paths `add -A --verbose` ' +
      'printed and scans those files; a finding costs one `ls-files --with-tree=HEAD` of the findings and one ' +
      '`update-index --force-remove` (not in this measurement: ordinary files make no finding).',
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
      if (quick) return;
      const results = path.join(root, 'bench', 'RESULTS.md');
      const text = fs.existsSync(results) ? fs.readFileSync(results, 'utf8') : '';
      const start = text.indexOf(SECTION_START);
      const end = text.indexOf(SECTION_END);
      const dated = markdown.replace(
        '## Secret check in version commits (issue 15)',
        `## Secret check in version commits (issue 15)\n\nMeasured ${new Date().toISOString()} with \`npx tsc -p . && node out/bench/secretsBench.js\`. Goal (≤ 5%): ${goal.pass ? 'met' : 'missed'}.`,
      );
      const next =
        start >= 0 && end > start
          ? `${text.slice(0, start)}${dated}${text.slice(end + SECTION_END.length)}`
          : `${text.trimEnd()}\n\n${dated}\n`;
      fs.writeFileSync(results, next);
    })
    .catch((error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    })
    .finally(() => fs.rmSync(workDir, { recursive: true, force: true }));
}
