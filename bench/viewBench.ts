/**
 * Issue 7: the Version History view.
 * - Host: building the view model for 10,000 commits (one `git log --shortstat` + the store join) against a raw
 *   `git log` of the same commits with the same arguments, alternating; git processes per refresh (PATH shim).
 * - Chromium: from the `didChangeVersions` message arriving to the list painted (two animation frames later),
 *   100 versions against 10,000, alternating, in the Vite-built page with the test's fake host.
 * Run alone: `node out/bench/viewBench.js` (after `npm run build && npm run compile`) prints its markdown.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { versionLogArgs } from '../src/core/git/versionLog';
import { rebuildFromTrailers } from '../src/core/turns/rebuildFromTrailers';
import { VersionHistory } from '../src/core/versionHistory';
import type { VersionRow } from '../src/vscode/historyView/protocol';
import { launchChromium, openFakeHostPage } from '../test/webview/webviewPage';
import { fmtRatio, git, GitProcessCounter, median, ms, timed } from './benchUtil';
import type { GoalRow } from './gitBench';
import { contextOf } from '../src/core/repoContextOf';

export interface ViewBenchOptions {
  workDir: string;
  progress: (line: string) => void;
  quick: boolean;
}

/** The page's globals the paint probe uses (this project compiles without the DOM lib). */
declare const window: {
  dispatchEvent(event: unknown): void;
  requestAnimationFrame(cb: () => void): void;
  __benchMessage: unknown;
};
declare const MessageEvent: new (type: string, init: { data: unknown }) => unknown;

/** A repository of `count` commits built with one `git fast-import`: every other one an [Agent] turn with trailers. */
async function buildHistory(dir: string, count: number): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  await git(dir, ['init', '-q', '-b', 'main']);
  const lines: string[] = [];
  const t0 = 1_700_000_000;
  for (let i = 0; i < count; i++) {
    const agent = i % 2 === 1;
    const message = agent
      ? `[Agent] Turn number ${i}\n\nAgent-Turn: turn-${i}\nAgent-Chat: chat-${i % 7}\n`
      : `Commit number ${i}\n`;
    const content = `line ${i}\n`.repeat(1 + (i % 5));
    lines.push(
      'commit refs/heads/main',
      `committer Bench <bench@example.com> ${t0 + i} +0000`,
      `data ${Buffer.byteLength(message)}`,
      message,
      `M 100644 inline src/file${i % 50}.txt`,
      `data ${Buffer.byteLength(content)}`,
      content,
      '',
    );
  }
  await git(dir, ['fast-import', '--quiet'], { input: lines.join('\n') });
  await git(dir, ['checkout', '-q', '-f', 'main']);
}

export async function runViewBench(options: ViewBenchOptions): Promise<{ goals: GoalRow[]; section: string }> {
  const commits = options.quick ? 500 : 10_000;
  const reps = options.quick ? 3 : 7;
  const dir = path.join(options.workDir, 'view-history');
  options.progress(`view: building a ${commits.toLocaleString('en')}-commit history…`);
  await buildHistory(dir, commits);
  const history = await VersionHistory.open(dir);
  const hostCore: number[] = [];
  const hostRaw: number[] = [];
  let processes: string[] = [];
  let rows: VersionRow[] = [];
  try {
    const turns = await rebuildFromTrailers(contextOf(history));
    options.progress(`view: ${turns} turns in the store; timing the view model against raw git log…`);
    const raw = () => git(dir, versionLogArgs(commits + 1));
    const core = async () => {
      const view = await history.versionsView(commits);
      if (view.kind !== 'versions' || view.rows.length !== commits) throw new Error('the view model lost rows');
      rows = view.rows;
    };
    await core();
    await raw();
    for (let i = 0; i < reps; i++) {
      const pair: [number[], () => Promise<unknown>][] = [
        [hostCore, core],
        [hostRaw, raw],
      ];
      if (i % 2 === 1) pair.reverse();
      for (const [into, fn] of pair) into.push(await timed(fn));
    }
    processes = await new GitProcessCounter(options.workDir).count(core);
  } finally {
    await history.close();
  }
  const coreP50 = median(hostCore);
  const rawP50 = median(hostRaw);

  options.progress('view: Chromium paint, 100 vs 10,000 versions…');
  const small = rows.slice(0, 100);
  const large =
    rows.length >= 10_000 ? rows.slice(0, 10_000) : Array.from({ length: 10_000 }, (_, i) => rows[i % rows.length]);
  const browser = await launchChromium();
  const paint: Record<'small' | 'large', number[]> = { small: [], large: [] };
  try {
    const host = await openFakeHostPage(browser);
    // The message is copied into the page first, untimed: that copy is the transport's (VS Code's postMessage
    // deserializes it before any handler runs), the same for any view; the clock starts when it is dispatched.
    const probe = async (list: VersionRow[], tag: number) => {
      const message = {
        type: 'didChangeVersions',
        view: {
          kind: 'versions',
          branch: 'main',
          rows: list.map((r) => ({ ...r, label: `${r.label} ${tag}` })),
          hasMore: false,
          canRedo: false,
          hasTurns: true,
        },
      };
      await host.page.evaluate((data) => {
        window.__benchMessage = data;
      }, message);
      await host.page.evaluate(() => new Promise<void>((resolve) => window.requestAnimationFrame(() => resolve())));
      return host.page.evaluate(
        () =>
          new Promise<number>((resolve) => {
            const started = performance.now();
            window.dispatchEvent(new MessageEvent('message', { data: window.__benchMessage }));
            window.requestAnimationFrame(() =>
              window.requestAnimationFrame(() => resolve(performance.now() - started)),
            );
          }),
      );
    };
    for (let i = 0; i < 2; i++) {
      await probe(small, -1);
      await probe(large, -1);
    }
    for (let i = 0; i < reps * 2; i++) {
      const order: ['small' | 'large', VersionRow[]][] = [
        ['small', small],
        ['large', large],
      ];
      if (i % 2 === 1) order.reverse();
      for (const [name, list] of order) paint[name].push(await probe(list, i));
    }
  } finally {
    await browser.close();
  }
  const paintSmall = median(paint.small);
  const paintLarge = median(paint.large);
  const paintRatio = paintLarge / paintSmall;
  const hostRatio = coreP50 / rawP50;
  const n = commits.toLocaleString('en');

  const goals: GoalRow[] = [
    {
      id: '7.1',
      measure: 'View paint after didChangeVersions, 10,000 vs 100 versions (Chromium)',
      goal: '≤ 1.5×',
      measured: `${ms(paintLarge)} vs ${ms(paintSmall)} = ${fmtRatio(paintRatio)}`,
      pass: paintRatio <= 1.5,
    },
    {
      id: '7.2',
      measure: `View model for ${n} commits (git log + store join) vs raw git log`,
      goal: '≤ 1.5×',
      measured: `${ms(coreP50)} vs ${ms(rawP50)} = ${fmtRatio(hostRatio)}`,
      pass: hostRatio <= 1.5,
    },
    {
      id: '7.3',
      measure: 'Git processes per view refresh',
      goal: '1',
      measured: String(processes.length),
      pass: processes.length === 1,
    },
  ];
  const section = [
    '## Version History view (issue 7)',
    '',
    '| measure | product p50 | baseline p50 | ratio |',
    '|---|---:|---:|---:|',
    `| view model, ${n} commits (${rows.filter((r) => r.turn).length.toLocaleString('en')} of them turns joined from the store) vs raw \`git log\` with the same arguments | ${ms(coreP50)} | ${ms(rawP50)} | ${fmtRatio(hostRatio)} |`,
    `| Chromium: didChangeVersions → list painted, 10,000 vs 100 versions | ${ms(paintLarge)} | ${ms(paintSmall)} | ${fmtRatio(paintRatio)} |`,
    '',
    `- Git processes per refresh: ${processes.length} (\`${processes.map((p) => p.split(' ').slice(0, 3).join(' ')).join('`, `')} …\`).`,
    `- Host: ${reps} alternating repetitions after one warm-up each; the raw side is \`git ${versionLogArgs(commits + 1)
      .slice(0, 6)
      .join(' ')} …\` started as the product starts its git (through the git launcher in \`npm run bench\`). ` +
      "Chromium: the message is first copied into the page untimed (the transport's structured clone, which VS Code does before any handler runs), then dispatched as a `message` event; the clock stops two animation frames later (the frame that paints the list); " +
      `${reps * 2} alternating repetitions after two warm-ups, every message with new labels so the list re-renders. Rows are validated as they scroll into view, and only the rows in view exist in the DOM.`,
    '',
  ].join('\n');
  return { goals, section };
}

if (require.main === module) {
  const workDir = fs.mkdtempSync(path.join(path.resolve(__dirname, '..', '..', 'bench'), '.view-'));
  runViewBench({
    workDir,
    progress: (l) => process.stderr.write(`[view bench] ${l}\n`),
    quick: process.env.AVH_BENCH_QUICK === '1',
  })
    .then(({ goals, section }) => {
      process.stdout.write(
        `${goals.map((g) => `| ${g.id} | ${g.measure} | ${g.goal} | ${g.measured} | ${g.pass === null ? 'info' : g.pass ? '**pass**' : '**FAIL**'} |`).join('\n')}\n\n${section}`,
      );
    })
    .catch((error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    })
    .finally(() => fs.rmSync(workDir, { recursive: true, force: true }));
}
