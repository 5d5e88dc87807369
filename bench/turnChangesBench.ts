/**
 * Issue 24 bench: what the Version History view pays to count a running or stopped turn's files changed so far
 * (src/core/turns/workingChanges.ts), on the 2,000- and 20,000-file bench repositories with 100 files changed by
 * the turn. Both sides run through the same git client (the launcher the extension uses), alternating in one loop:
 *
 * - ours, a turn begun on a clean tree (its base is HEAD): the probe's status, parsed — against that very status
 *   (`git status --porcelain=v2 -uall`), the raw baseline;
 * - ours, a turn begun on the user's 20 uncommitted edits (its base is a snapshot): the status, one `diff-tree` and
 *   an in-process hash of those 20 files — against the same status, and against the snapshot way of answering it
 *   (`add -A` into a copy of the index, `write-tree`, `diff-tree`), which also writes objects and runs the secret
 *   filter, and which the view must not do.
 *
 * Run alone (prints its section and goals, writes nothing): `npx tsc -p . && node out/bench/turnChangesBench.js`
 * (AVH_BENCH_QUICK=1 for a 500-file repository). Register it in bench/index.ts: `const turnChanges = await runTurnChangesBench({ workDir, progress, quick });` with
 * the other sections, `...turnChanges.goals` in the goals and `turnChanges.section` in the markdown.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveRepository } from '../src/core/git/repository';
import { PROBE_ENV, PROBE_STATUS_ARGS } from '../src/core/git/statusProbe';
import { TemporaryIndex, writeWorkingTree } from '../src/core/git/workingTree';
import { treeChanges } from '../src/core/git/worktreeUpdate';
import { workingChanges } from '../src/core/turns/workingChanges';
import { buildRepo, fmtRatio, git, median, ms, now, percentile, pickFiles, resetTo } from './benchUtil';
import type { GoalRow } from './gitBench';

export interface TurnChangesBenchOptions {
  workDir: string;
  progress: (line: string) => void;
  quick: boolean;
}

interface Row {
  files: number;
  base: 'HEAD' | 'snapshot';
  ours: number[];
  status: number[];
  snapshot: number[];
  counted: number;
}

/** Writes `rel` with content of its own (a turn's edit, or the user's). */
function edit(dir: string, rel: string, tag: string): void {
  const file = path.join(dir, rel);
  fs.writeFileSync(file, `${tag}\n${fs.readFileSync(file, 'utf8')}`);
}

export async function runTurnChangesBench(
  options: TurnChangesBenchOptions,
): Promise<{ goals: GoalRow[]; section: string }> {
  const sizes = options.quick ? [500] : [2_000, 20_000];
  const reps = options.quick ? 3 : 15;
  const rows: Row[] = [];
  for (const count of sizes) {
    options.progress(`turn changes: building a ${count.toLocaleString('en')}-file repository…`);
    const bench = await buildRepo(path.join(options.workDir, `turn-changes-${count}`), count, 4_096);
    const repo = await resolveRepository(bench.dir);
    const turnFiles = pickFiles(bench, 100);
    const userFiles = bench.files.filter((f) => !turnFiles.includes(f)).slice(0, 20);
    for (const base of ['HEAD', 'snapshot'] as const) {
      await resetTo(bench, bench.base);
      let baseCommit = bench.base;
      if (base === 'snapshot') {
        for (const f of userFiles) edit(bench.dir, f, 'the user edits this');
        // The base snapshot a turn begun here would record: the working tree as a commit on no ref.
        await git(bench.dir, ['add', '-A']);
        const tree = (await git(bench.dir, ['write-tree'])).stdout.trim();
        baseCommit = (await git(bench.dir, ['commit-tree', tree, '-p', bench.base, '-m', 'base'])).stdout.trim();
        await git(bench.dir, ['reset', '-q']);
      }
      for (const f of turnFiles) edit(bench.dir, f, 'the agent edits this');
      const row: Row = { files: count, base, ours: [], status: [], snapshot: [], counted: 0 };
      const variants: Record<'ours' | 'status' | 'snapshot', () => Promise<void>> = {
        ours: async () => {
          row.counted = (await workingChanges(repo, [baseCommit])).changes.get(baseCommit)!.length;
        },
        status: async () => {
          await repo.git.run(repo.root, PROBE_STATUS_ARGS, { env: PROBE_ENV, stdoutViaFile: true });
        },
        snapshot: async () => {
          const index = TemporaryIndex.create(repo);
          try {
            const { tree } = await writeWorkingTree(repo, index);
            await treeChanges(repo, baseCommit, tree);
          } finally {
            index.dispose();
          }
        },
      };
      const names = Object.keys(variants) as (keyof typeof variants)[];
      for (let rep = -1; rep < reps; rep++) {
        const order = rep % 2 === 0 ? names : [...names].reverse();
        for (const name of order) {
          const t0 = now();
          await variants[name]();
          if (rep >= 0) row[name].push(now() - t0);
        }
      }
      // The user's own pre-turn edits are in a snapshot base: only the turn's 100 files count.
      if (row.counted !== 100) throw new Error(`turn changes bench: counted ${row.counted} files, expected 100`);
      rows.push(row);
    }
  }
  const ratio = (r: Row) => median(r.ours) / median(r.status);
  const goals: GoalRow[] = rows.map((r) => ({
    id: '24.1',
    measure: `files changed so far, ${r.files.toLocaleString('en')} files, base ${r.base} (100 changed), vs git status`,
    goal: r.base === 'HEAD' ? '≤ 1.3×' : '≤ 1.5×',
    measured: `${fmtRatio(ratio(r))} (${ms(median(r.ours))} vs ${ms(median(r.status))})`,
    pass: ratio(r) <= (r.base === 'HEAD' ? 1.3 : 1.5),
  }));
  const section = [
    '## Files changed so far (the turns above the versions, issue 24)',
    '',
    'What the Version History view runs on each refresh while a turn runs or a stopped turn is shown: the working ' +
      'tree against the turn’s base snapshot, 100 files changed by the turn (and, for a snapshot base, 20 edits ' +
      'the user had made before it). Each side through the same git client; p50 / p99 over ' +
      `${reps} alternating repetitions.`,
    '',
    '| files | base | ours p50 / p99 | `git status` p50 | ratio | snapshot way (`add -A`, `write-tree`, `diff-tree`) p50 |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.files.toLocaleString('en')} | ${r.base} | ${ms(median(r.ours))} / ${ms(percentile(r.ours, 99))} | ` +
        `${ms(median(r.status))} | ${fmtRatio(ratio(r))} | ${ms(median(r.snapshot))} |`,
    ),
    '',
  ].join('\n');
  return { goals, section };
}

if (require.main === module) {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-turn-changes-'));
  const quick = process.env.AVH_BENCH_QUICK === '1';
  runTurnChangesBench({ workDir, progress: (line) => process.stderr.write(`${line}\n`), quick })
    .then(({ goals, section }) => {
      process.stdout.write(`${section}\n`);
      for (const g of goals) process.stdout.write(`${g.id} ${g.measure}: ${g.measured} (goal ${g.goal})\n`);
    })
    .finally(() => fs.rmSync(workDir, { recursive: true, force: true }));
}
