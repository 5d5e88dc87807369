/**
 * Test-only crash points. When AVH_FAILPOINT names the point being passed, the process SIGKILLs itself there,
 * so fault-injection tests can stop a real restore at every phase boundary and between the steps of every
 * effect. Compiled out of the bundles users get (the body is empty there, so esbuild removes every call);
 * live in tsc output and the test build.
 */
export function failpoint(name: string): void {
  if (typeof AVH_PRODUCTION_BUILD !== 'undefined') return;
  const wanted = process.env.AVH_FAILPOINT;
  if (wanted !== undefined && wanted === name) {
    process.kill(process.pid, 'SIGKILL');
  }
}
