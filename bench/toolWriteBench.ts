/**
 * Tool-event cost (issue 25, docs/design/two-chats.md): every file-tool call of an agent (Claude Code's PostToolUse
 * Write/Edit, Codex's apply_patch, …) now runs our hook, which appends the paths to its chat's file on the fast
 * path. This measures that event through the production CLI as the agent runs it (`connect`'s command, through a
 * shell) against the floor it cannot go below, the same shell and Node start doing nothing, alternating in one
 * loop on a 2,000-file repository with a running turn. Also: the plain `node dist/cli.js hook …` start, and the
 * fold of a turn's lines at its end (in-process, fs only).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { classifyShellCommand } from '../src/cli/hooks/destructiveCommand';
import { hookCommand, hookCommands, hookEnvWords, shellWord } from '../src/cli/installation';
import { chatWritesSince, foldTurnWrites, recordToolWrites } from '../src/core/turns/toolWrites';
import type { GoalRow } from './benchSection';
import { buildRepo, fmtRatio, median, ms, percentile } from './benchUtil';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const SESSION = 'bench-tool-session';

export interface ToolWriteBenchOptions {
  workDir: string;
  progress: (line: string) => void;
  quick: boolean;
}

function wall(command: string, args: readonly string[], cwd: string, input = ''): number {
  const started = performance.now();
  const r = spawnSync(command, args, { cwd, input, stdio: ['pipe', 'ignore', 'pipe'] });
  const elapsed = performance.now() - started;
  if (r.status !== 0)
    throw new Error(`${path.basename(command)} exited ${r.status}: ${r.stderr.toString().slice(0, 400)}`);
  return elapsed;
}

/**
 * The classifier on hostile command lines (what test/unit/destructiveCommand.test.ts checks the answers of), in
 * process: each line's median over `reps` runs after a warm-up. A PreToolUse event classifies its command once.
 */
function hostileClassifierRows(reps: number): string[] {
  const depth = 5_000;
  const lines: [string, string][] = [
    ['1 MB line (over the 64 KiB limit: not parsed)', 'git reset --hard && ' + 'x'.repeat(1024 * 1024)],
    ['just under 64 KiB, `rm -rf` last', 'echo ' + 'x'.repeat(65_000) + ' && rm -rf y'],
    ['10,000 segments `a && … && rm -rf x`', Array.from({ length: 9_999 }, () => 'a').join(' && ') + ' && rm -rf x'],
    ['10,000 pipes `rm \\| rm \\| …`', Array.from({ length: 10_000 }, () => 'rm').join('|')],
    [`${depth.toLocaleString('en')} nested \`$(\``, 'echo ' + '$('.repeat(depth) + 'rm -rf x' + ')'.repeat(depth)],
    ['20,000 nested subshells `((…rm -rf x…))`', '('.repeat(20_000) + 'rm -rf x' + ')'.repeat(20_000)],
    ['12,000 `sudo` wrappers', 'sudo '.repeat(12_000) + 'rm -rf x'],
  ];
  return lines.map(([label, line]) => {
    classifyShellCommand(line);
    const times: number[] = [];
    for (let i = 0; i < reps; i++) {
      const started = performance.now();
      classifyShellCommand(line);
      times.push(performance.now() - started);
    }
    return `| ${label} | ${(line.length / 1024).toFixed(0)} KB | ${ms(median(times))} | ${ms(percentile(times, 90))} |`;
  });
}

/** The section's markdown: PostToolUse (fast path) vs a bare Node start, and the fold at a turn's end. */
export async function runToolWriteBench(
  options: ToolWriteBenchOptions,
): Promise<{ section: string; goals: GoalRow[] }> {
  if (!fs.existsSync(CLI)) throw new Error('tool-write bench: dist/cli.js is missing (npm run build)');
  const files = options.quick ? 200 : 2_000;
  const reps = options.quick ? 5 : 31;
  const dir = path.join(options.workDir, 'tool-write-repo');
  options.progress(`tool writes: building a ${files.toLocaleString('en')}-file repository…`);
  const built = await buildRepo(dir, files, 2_048);
  // What `connect` writes: the lifecycle events' command, and the tool events' `--tool` form of it (the entry then
  // starts no git before it reads the event); `older` is a tool event's entry written before `--tool` existed.
  const commands = hookCommands('claude-code', { cliFile: CLI });
  const older = hookCommand('claude-code', { cliFile: CLI });
  const installed = commands.tool;
  const begin = JSON.stringify({ hook_event_name: 'UserPromptSubmit', session_id: SESSION, cwd: dir, prompt: 'bench' });
  wall('/bin/sh', ['-c', commands.lifecycle], dir, begin);
  const edit = (i: number) =>
    JSON.stringify({
      hook_event_name: 'PostToolUse',
      session_id: SESSION,
      cwd: dir,
      tool_name: 'Edit',
      tool_input: { file_path: path.join(dir, `src/file-${i}.ts`), old_string: 'a', new_string: 'b' },
      tool_response: { filePath: path.join(dir, `src/file-${i}.ts`) },
    });
  const times: Record<'node' | 'tool' | 'plain', number[]> = { node: [], tool: [], plain: [] };
  const floor = [...hookEnvWords(), process.execPath, '-e', '0'].map(shellWord).join(' ');
  options.progress(`tool writes: ${reps} rounds of PostToolUse vs a bare Node start…`);
  for (let i = 0; i < reps + 1; i++) {
    const round = {
      node: wall('/bin/sh', ['-c', floor], dir),
      tool: wall('/bin/sh', ['-c', installed], dir, edit(i)),
      plain: wall(process.execPath, [CLI, 'hook', 'claude-code'], dir, edit(i)),
    };
    if (i === 0) continue; // warm-up
    for (const k of Object.keys(round) as (keyof typeof round)[]) times[k].push(round[k]);
  }
  // Issue 34: a pre-tool event. Not destructive: answered at once, against the same floor. Destructive, with 100
  // changed files: the checkpoint, against its own floor — the shell and Node start plus raw git making the same
  // snapshot (a temporary index from HEAD, add -A, write-tree, commit-tree, update-ref).
  const bashEvent = (command: string) =>
    JSON.stringify({
      hook_event_name: 'PreToolUse',
      session_id: SESSION,
      cwd: dir,
      tool_name: 'Bash',
      tool_input: { command },
    });
  const changed = built.files.slice(0, 100);
  for (const rel of changed) fs.appendFileSync(path.join(dir, rel), 'changed by the bench turn\n');
  const rawSnapshot = [
    'set -e',
    'export GIT_INDEX_FILE="$(git rev-parse --git-dir)/bench-checkpoint-index"',
    'git read-tree HEAD',
    'git add -A',
    't=$(git write-tree)',
    'c=$(git commit-tree "$t" -p HEAD -m checkpoint)',
    'git update-ref "refs/bench/checkpoint/$$" "$c"',
    'rm -f "$GIT_INDEX_FILE"',
  ].join('\n');
  const pre: Record<'floor' | 'harmless' | 'harmlessOlder' | 'checkpointFloor' | 'checkpoint', number[]> = {
    floor: [],
    harmless: [],
    harmlessOlder: [],
    checkpointFloor: [],
    checkpoint: [],
  };
  options.progress(`tool writes: ${reps} rounds of PreToolUse (harmless, and a checkpoint of 100 changes)…`);
  for (let i = 0; i < reps + 1; i++) {
    const round = {
      floor: wall('/bin/sh', ['-c', floor], dir),
      harmless: wall('/bin/sh', ['-c', commands.beforeTool], dir, bashEvent('npm test -- --watch=false')),
      harmlessOlder: wall('/bin/sh', ['-c', older], dir, bashEvent('npm test -- --watch=false')),
      checkpointFloor: wall('/bin/sh', ['-c', `${floor} && ${rawSnapshot}`], dir),
      checkpoint: wall('/bin/sh', ['-c', commands.beforeTool], dir, bashEvent('git reset --hard')),
    };
    if (i === 0) continue; // warm-up
    for (const k of Object.keys(round) as (keyof typeof round)[]) pre[k].push(round[k]);
  }
  const checkpoints = fs.readdirSync(path.join(dir, '.git', 'refs', 'agent-versions', 'checkpoints')).length;
  if (checkpoints < reps) throw new Error(`tool writes: ${checkpoints} checkpoints for ${reps + 1} destructive events`);
  const stateDir = path.join(dir, '.git', 'agent-versions');
  // `git clean -fdx` over an ignored build folder of 5,000 small files (the most a checkpoint keeps whole): the
  // checkpoint copies it, against the same floor plus `cp -r` of the folder. Informational: the issue set no goal.
  const buildFiles = options.quick ? 500 : 5_000;
  for (let i = 0; i < buildFiles; i++) {
    const rel = `build/out-${i % 50}/chunk-${i}.js`;
    fs.mkdirSync(path.join(dir, path.dirname(rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), `// ${rel}\n${'x'.repeat(1_000)}\n`);
  }
  const copies = path.join(options.workDir, 'tool-write-build-copies');
  fs.mkdirSync(copies, { recursive: true });
  const clean: Record<'floor' | 'hook', number[]> = { floor: [], hook: [] };
  const cleanReps = options.quick ? 3 : 11;
  options.progress(`tool writes: ${cleanReps} rounds of a git clean -fdx checkpoint over ${buildFiles} build files…`);
  for (let i = 0; i < cleanReps + 1; i++) {
    const round = {
      floor: wall('/bin/sh', ['-c', `${floor} && ${rawSnapshot} && cp -r build ${shellWord(`${copies}/${i}`)}`], dir),
      hook: wall('/bin/sh', ['-c', commands.beforeTool], dir, bashEvent('git clean -fdx')),
    };
    // Untimed: the copies of both sides go, so the disk holds one round's at a time.
    fs.rmSync(copies, { recursive: true, force: true });
    fs.mkdirSync(copies, { recursive: true });
    for (const saved of fs.readdirSync(path.join(stateDir, 'checkpoints')))
      fs.rmSync(path.join(stateDir, 'checkpoints', saved, 'files'), { recursive: true, force: true });
    // The file system commits those 10,000 deletions before the next round: otherwise the next round's first
    // creations wait on that journal commit (the hook's opens took 2 s of its 2.1 s in a first version of this row).
    spawnSync('sync');
    if (i === 0) continue; // warm-up
    clean.floor.push(round.floor);
    clean.hook.push(round.hook);
  }
  const recordedLines = chatWritesSince(stateDir, SESSION, 0).paths.length;
  // The fold at a turn's end, in process: 200 reported edits read and written as the turn's record.
  const foldDir = path.join(options.workDir, 'tool-write-fold');
  fs.mkdirSync(foldDir, { recursive: true });
  const folds: number[] = [];
  for (let i = 0; i < reps; i++) {
    for (let j = 0; j < 200; j++)
      recordToolWrites(foldDir, dir, `fold-${i}`, { paths: [`${dir}/f${j}`], shell: false });
    const started = performance.now();
    foldTurnWrites(foldDir, `fold-${i}`, `turn-${i}`, 0);
    folds.push(performance.now() - started);
  }
  const node = median(times.node);
  const rows = [
    ['the floor: the installed command’s shell + Node start doing nothing', times.node],
    ['PostToolUse Edit, as connected (`hook claude-code --tool`; fast path: one appended line)', times.tool],
    ['PostToolUse Edit, plain `node dist/cli.js hook claude-code`', times.plain],
  ] as const;
  const section = [
    '## Tool events (issue 25: two chats in one working tree)',
    '',
    `${files.toLocaleString('en')}-file repository, one running turn, ${reps} alternating rounds after a warm-up; ` +
      `${recordedLines} distinct files recorded. The floor is what no hook can go below; the ratio is against it.`,
    '',
    '| event | median | p90 | vs the floor |',
    '|---|---:|---:|---:|',
    ...rows.map(
      ([label, t]) => `| ${label} | ${ms(median(t))} | ${ms(percentile(t, 90))} | ${fmtRatio(median(t) / node)} |`,
    ),
    `| fold of a turn’s 200 reported edits at its end (in process) | ${ms(median(folds))} | ` +
      `${ms(percentile(folds, 90))} | — |`,
    '',
    '### Before a tool runs (issue 34: checkpoints before destructive commands)',
    '',
    `The same repository and turn, ${reps} alternating rounds after a warm-up; goals: a command that is not ` +
      'destructive ≤ 1.1× the floor, a checkpoint (100 changed files) ≤ 1.3× its floor (the floor plus raw git ' +
      'making the same snapshot).',
    '',
    '| event | median | p90 | vs its floor |',
    '|---|---:|---:|---:|',
    `| the floor (as above) | ${ms(median(pre.floor))} | ${ms(percentile(pre.floor, 90))} | 1.00× |`,
    `| PreToolUse Bash \`npm test\`, as connected (\`--tool\`; not destructive) | ${ms(median(pre.harmless))} | ` +
      `${ms(percentile(pre.harmless, 90))} | ${fmtRatio(median(pre.harmless) / median(pre.floor))} |`,
    `| the same, an entry connected before \`--tool\` (an early \`git status\` started, then stopped) | ` +
      `${ms(median(pre.harmlessOlder))} | ${ms(percentile(pre.harmlessOlder, 90))} | ` +
      `${fmtRatio(median(pre.harmlessOlder) / median(pre.floor))} |`,
    `| its floor: the floor + raw git snapshot (read-tree, add -A, write-tree, commit-tree, update-ref) | ` +
      `${ms(median(pre.checkpointFloor))} | ${ms(percentile(pre.checkpointFloor, 90))} | 1.00× |`,
    `| PreToolUse Bash \`git reset --hard\`, as connected (fast path: checkpoint of 100 changed files) | ` +
      `${ms(median(pre.checkpoint))} | ${ms(percentile(pre.checkpoint, 90))} | ` +
      `${fmtRatio(median(pre.checkpoint) / median(pre.checkpointFloor))} |`,
    '',
    `\`git clean -fdx\` with an ignored \`build/\` of ${buildFiles.toLocaleString('en')} files (1 KB each), ` +
      `${cleanReps} alternating rounds after a warm-up: the checkpoint keeps the folder whole (issue 34; no goal set).`,
    '',
    '| event | median | p90 | vs its floor |',
    '|---|---:|---:|---:|',
    `| its floor: the floor + raw git snapshot + \`cp -r build\` | ${ms(median(clean.floor))} | ` +
      `${ms(percentile(clean.floor, 90))} | 1.00× |`,
    `| PreToolUse Bash \`git clean -fdx\`, as connected (checkpoint + the build folder copied) | ` +
      `${ms(median(clean.hook))} | ${ms(percentile(clean.hook, 90))} | ` +
      `${fmtRatio(median(clean.hook) / median(clean.floor))} |`,
    '',
    `The classifier on hostile command lines, in process, ${reps} runs after a warm-up (no goal set; the answers are ` +
      'checked in test/unit/destructiveCommand.test.ts):',
    '',
    '| command line | size | median | p90 |',
    '|---|---:|---:|---:|',
    ...hostileClassifierRows(reps),
    '',
  ].join('\n');
  const harmless = median(pre.harmless) / median(pre.floor);
  const checkpoint = median(pre.checkpoint) / median(pre.checkpointFloor);
  const goals: GoalRow[] = [
    {
      id: 'pre-tool-harmless',
      measure: 'PreToolUse of a command that is not destructive, vs the shell + Node start (issue 34)',
      goal: '≤ 1.1×',
      measured: fmtRatio(harmless),
      pass: harmless <= 1.1,
    },
    {
      id: 'pre-tool-checkpoint',
      measure: 'PreToolUse checkpoint (2,000 files, 100 changed), vs the start + raw git snapshot (issue 34)',
      goal: '≤ 1.3×',
      measured: fmtRatio(checkpoint),
      pass: checkpoint <= 1.3,
    },
  ];
  return { section, goals };
}
