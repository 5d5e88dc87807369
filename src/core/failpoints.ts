/**
 * Test-only crash points. When AVH_FAILPOINT names the point being passed, the process SIGKILLs itself there,
 * so fault-injection tests can stop a real restore at every phase boundary and between the steps of every
 * effect. Unset in normal use; the check is one string comparison.
 */
export function failpoint(name: string): void {
  const wanted = process.env.AVH_FAILPOINT;
  if (wanted !== undefined && wanted === name) {
    process.kill(process.pid, 'SIGKILL');
  }
}
