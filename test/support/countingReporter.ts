// A mocha reporter: the spec reporter's output, plus the pass/fail counts written to $AVH_TEST_STATS
// so scripts/test.mjs can print one "N passed, N failed" line for the whole suite.
import * as fs from 'node:fs';
import Mocha from 'mocha';

class CountingReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options: Mocha.MochaOptions) {
    super(runner, options);
    runner.once('end', () => {
      const file = process.env.AVH_TEST_STATS;
      if (file) fs.writeFileSync(file, JSON.stringify({ passed: this.stats.passes, failed: this.stats.failures }));
    });
  }
}

export = CountingReporter;
