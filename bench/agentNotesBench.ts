/**
 * What a note costs the prompt that carries it (issue 23, docs/design/agent-notes.md): the production CLI bundle
 * (dist/cli.js) as a new process per event, through the command `connect` writes, on a 2,000-file repository. Each
 * repetition makes a turn that changes 10 files, undoes it with `agent-versions undo` (not timed), then times the
 * chat's next prompt (it carries the note: the full path, the hand-over in the turn's record and the drop once
 * printed), the prompt after it (no note: the fast path) and a prompt whose facts file was removed first (no note,
 * the full path: what the note's prompt costs without the note), each followed by an untimed Stop.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hookCommand } from '../src/cli/installation';
import { buildRepo, fmtRatio, median, ms, percentile } from './benchUtil';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const SESSION = 'bench-notes';

export interface AgentNotesBenchOptions {
  workDir: string;
  progress: (line: string) => void;
  quick: boolean;
}

function run(command: string, args: readonly string[], cwd: string, input = ''): { ms: number; stdout: string } {
  const started = performance.now();
  const r = spawnSync(command, args, { cwd, input, encoding: 'utf8' });
  const elapsed = performance.now() - started;
  if (r.status !== 0) throw new Error(`${path.basename(command)} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms: elapsed, stdout: r.stdout };
}

export async function runAgentNotesBench(options: AgentNotesBenchOptions): Promise<{ section: string }> {
  if (!fs.existsSync(CLI)) throw new Error('agent notes bench: dist/cli.js is missing (npm run build)');
  const files = options.quick ? 200 : 2_000;
  const reps = options.quick ? 3 : 11;
  const dir = path.join(options.workDir, 'notes-repo');
  options.progress(`agent notes: building a ${files.toLocaleString('en')}-file repository…`);
  const repo = await buildRepo(dir, files, 2_048);
  const installed = hookCommand('claude-code', { cliFile: CLI });
  const hook = (event: string) =>
    run(
      '/bin/sh',
      ['-c', installed],
      dir,
      JSON.stringify({ hook_event_name: event, session_id: SESSION, cwd: dir, prompt: 'bench prompt' }),
    );
  const factsFile = path.join(dir, '.git', 'agent-versions', 'hook-facts.json');
  const times = { note: [] as number[], fast: [] as number[], full: [] as number[] };
  options.progress(`agent notes: ${reps} repetitions of a turn, undo, and three timed prompts…`);
  for (let i = 0; i <= reps; i++) {
    hook('UserPromptSubmit');
    for (const file of repo.files.slice(0, 10)) fs.appendFileSync(path.join(dir, file), `edit ${i}\n`);
    hook('Stop');
    run(process.execPath, [CLI, 'undo'], dir);
    const note = hook('UserPromptSubmit');
    if (!note.stdout.includes('additionalContext')) throw new Error('agent notes bench: the prompt carried no note');
    hook('Stop');
    const fast = hook('UserPromptSubmit');
    hook('Stop');
    fs.rmSync(factsFile, { force: true });
    const full = hook('UserPromptSubmit');
    hook('Stop');
    if (fast.stdout !== '' || full.stdout !== '') throw new Error('agent notes bench: a prompt without a note printed');
    if (i === 0) continue; // warm-up
    times.note.push(note.ms);
    times.fast.push(fast.ms);
    times.full.push(full.ms);
  }
  const line = (label: string, values: number[]) =>
    `| ${label} | ${ms(median(values))} | ${ms(percentile(values, 90))} | ${ms(Math.min(...values))} |`;
  const section = [
    '## Agent notes (issue 23)',
    '',
    `The hook as \`connect\` installs it (\`/bin/sh -c\`, dist/cli.js), on a ${files.toLocaleString('en')}-file ` +
      `repository; ${reps} repetitions after one warm-up, each after a turn of 10 changed files and its Undo.`,
    '',
    '| prompt (UserPromptSubmit) | p50 | p90 | min |',
    '|---|---:|---:|---:|',
    line('the first after the Undo: carries the note (full path)', times.note),
    line('the next one: no note (fast path)', times.fast),
    line('no note, facts file removed (full path)', times.full),
    '',
    `- The note's prompt against the full path without a note: ${fmtRatio(median(times.note) / median(times.full))}.`,
    '',
  ].join('\n');
  return { section };
}
