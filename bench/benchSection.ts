/**
 * What a section of `npm run bench` is (bench/index.ts lists them): a runner that measures one thing and returns
 * its markdown and the rows it adds to the goals table.
 */

/** One row of the goals table. */
export interface GoalRow {
  id: string;
  measure: string;
  goal: string;
  measured: string;
  /** null: informational, no goal. */
  pass: boolean | null;
}

/** What every section runner is given. */
export interface BenchContext {
  /** A folder of this run for the section's repositories (removed at the end of the run). */
  workDir: string;
  /** A progress line on stderr (the results go to the markdown). */
  progress: (line: string) => void;
  /** Tiny repositories and few repetitions (AVH_BENCH_QUICK=1), for working on the bench itself. */
  quick: boolean;
  /** Parts of the git section to run alone (AVH_BENCH_ONLY=undo,revert,health). */
  gitParts?: readonly string[];
}

export interface SectionResult {
  /** The section's markdown, starting with its `## ` heading. */
  markdown: string;
  goals?: readonly GoalRow[];
}

export interface BenchSection {
  /** What AVH_BENCH_ONLY names it by. */
  name: string;
  /** Its heading in RESULTS.md until it has a result (running, or failed). */
  title: string;
  /** What must be installed first: 'vscode-harness' = scripts/vscode/setup.sh (Chromium, Node 24, code-server). */
  needs?: 'vscode-harness';
  run(context: BenchContext): Promise<SectionResult>;
}
