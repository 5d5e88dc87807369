/**
 * The one polling helper of the suite: reads `read()` until `ok(value)` holds and returns that value, or fails
 * after `timeoutMs` naming `what` and the last value read. Tests wait on a condition this way, never on a fixed sleep.
 */
export async function eventually<T>(
  what: string,
  read: () => T | PromiseLike<T>,
  ok: (value: T) => boolean,
  { timeoutMs = 20_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!ok(value)) {
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${describe(value)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    value = await read();
  }
  return value;
}

function describe(value: unknown): string {
  try {
    return (JSON.stringify(value) ?? String(value)).slice(0, 300);
  } catch {
    return String(value).slice(0, 300);
  }
}
