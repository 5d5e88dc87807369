/**
 * Test-only crash points. When AVH_FAILPOINT names the point being passed, the process SIGKILLs itself there,
 * so fault-injection tests can stop a real restore at every phase boundary and between the steps of every
 * effect. Compiled out of the bundles users get (the body is empty there, so esbuild removes every call);
 * live in tsc output and the test build.
 */
export function failpoint(name: string): void {
  if (typeof AVH_PRODUCTION_BUILD !== 'undefined') return;
  const wanted = process.env.AVH_FAILPOINT;
  if (wanted !== undefined && wanted === name) crashNow();
}

/** Test-only: what dies with this process at a crash point (the git processes it started: gitRunner registers them). */
const dyingWithUs: (() => void)[] = [];

export function onCrash(kill: () => void): void {
  dyingWithUs.push(kill);
}

/** SIGKILLs this process and, first, what dies with it: a power cut, not orphans finishing their work afterwards. */
export function crashNow(): void {
  for (const kill of dyingWithUs) kill();
  process.kill(process.pid, 'SIGKILL');
}
