// Extension-host test entry (the @vscode/test-electron convention): VS Code loads this file inside the
// extension host and calls run(). The same file serves code-server (scripts/vscode/runExtensionTests.mjs)
// and Electron (runElectron.ts). Its AVH_MOCHA_RESULT line is what the runners count.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as util from 'node:util';
import Mocha from 'mocha';

export const RESULT_MARKER = 'AVH_MOCHA_RESULT';
/** Set by the code-server runner: reporter lines get this prefix so it can tell them from the workbench's own log. */
export const LOG_TAG_ENV = 'AVH_EXT_HOST_LOG_TAG';

export function run(): Promise<void> {
  const restoreReporter = formatReporterOutput(process.env[LOG_TAG_ENV] ?? '');
  const mocha = new Mocha({
    ui: 'bdd',
    reporter: 'spec',
    color: false, // the output travels through VS Code's log as plain text
    timeout: 60_000,
    grep: process.env.AVH_MOCHA_GREP || undefined,
  });
  for (const file of testFiles(__dirname)) mocha.addFile(file);

  return new Promise<void>((resolve, reject) => {
    const report = (counts: { passed: number; failed: number; pending: number }) =>
      Mocha.reporters.Base.consoleLog(`${RESULT_MARKER} ${JSON.stringify(counts)}`);
    try {
      const runner = mocha.run((failures) => {
        report({ passed: runner.stats?.passes ?? 0, failed: failures, pending: runner.stats?.pending ?? 0 });
        if (failures > 0) reject(new Error(`${failures} extension-host test(s) failed`));
        else resolve();
      });
    } catch (err) {
      report({ passed: 0, failed: 1, pending: 0 });
      reject(err);
    }
  }).finally(restoreReporter);
}

function testFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((rel) => rel.endsWith('.test.js'))
    .sort()
    .map((rel) => path.join(dir, rel));
}

// VS Code forwards the extension host's console to the workbench log without applying printf-style
// formats (and its console methods cannot be replaced), while mocha's reporters format with '%s': route
// the reporter through a formatter that also tags each line when the runner asks for it.
function formatReporterOutput(tag: string): () => void {
  const base = Mocha.reporters.Base;
  const original = base.consoleLog;
  base.consoleLog = (...args: unknown[]) => {
    const text = util.format(...args);
    console.log(
      tag
        ? text
            .split('\n')
            .map((line) => tag + line)
            .join('\n')
        : text,
    );
  };
  return () => {
    base.consoleLog = original;
  };
}
