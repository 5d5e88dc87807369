// A mocha reporter: the spec reporter's output, plus the pass/fail counts written to $AVH_TEST_STATS
// so scripts/test.mjs can print one "N passed, N failed" line for the whole suite. The counts are written
// after every test too, so a crash during mocha's epilogue cannot lose them.
import * as fs from 'node:fs';
import Mocha from 'mocha';

class CountingReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options: Mocha.MochaOptions) {
    super(runner, options);
    const file = process.env.AVH_TEST_STATS;
    let passed = 0;
    let failed = 0;
    const save = () => {
      if (file) fs.writeFileSync(file, JSON.stringify({ passed, failed }));
    };
    runner.on('pass', () => {
      passed++;
      save();
    });
    runner.on('fail', () => {
      failed++;
      save();
    });
    runner.once('end', save);
  }
}

export = CountingReporter;
