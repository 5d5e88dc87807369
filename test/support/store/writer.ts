/**
 * Child process for the store's cross-process and crash tests (spawned with process.execPath from out/).
 * Prints one line per event to stdout with a synchronous write, so a line the parent reads was printed before
 * any SIGKILL: "ready", "ack <n> <counter>", "locked", "done".
 *
 *   writer.js store  <dir> <tag> <count|-1> [maxDelayMs]   transactions: insert chat <tag>-<n>, counter += 1
 *   writer.js hold   <lockPath> <purpose> [portable]        take a pidLock and keep it until killed
 *                                                          (portable: with the heartbeat provider, as off Linux)
 *   writer.js mutex  <lockPath> <counterFile> <rounds>      lock, read-increment-write a file, unlock
 *
 * AVH_STORE_COMPACT_EVERY forces frequent compaction; AVH_TEST_SEED seeds the delays (test/support/seededRandom.ts).
 */
import * as fs from 'node:fs';
import { DurableStore } from '../../../src/core/store/durableStore';
import { acquireLock, portableLiveness, setLockLiveness } from '../../../src/core/store/pidLock';
import { seededRandom } from '../seededRandom';

const say = (line: string) => fs.writeSync(1, `${line}\n`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function store(dir: string, tag: string, count: number, maxDelayMs: number): Promise<void> {
  const compactEvery = process.env.AVH_STORE_COMPACT_EVERY ? Number(process.env.AVH_STORE_COMPACT_EVERY) : undefined;
  const { store } = await DurableStore.open(dir, { compactEvery, lockTimeoutMs: 30_000 });
  say('ready');
  const random = seededRandom();
  for (let n = 0; count < 0 || n < count; n++) {
    const counter = await store.transaction((tx) => {
      const now = Date.now();
      tx.run('INSERT INTO chats (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)', [
        `${tag}-${n}`,
        `chat ${n}`,
        now,
        now,
      ]);
      const row = tx.get<{ value: string }>("SELECT value FROM meta WHERE key = 'counter'");
      const next = Number(row?.value ?? '0') + 1;
      tx.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('counter', ?)", [String(next)]);
      return next;
    });
    say(`ack ${n} ${counter}`);
    if (maxDelayMs > 0) await sleep(random.next() * maxDelayMs);
  }
  await store.close();
  say('done');
}

async function hold(lockPath: string, purpose: string, provider: string | undefined): Promise<void> {
  if (provider === 'portable') setLockLiveness(portableLiveness());
  await acquireLock(lockPath, { timeoutMs: 10_000, purpose });
  say('locked');
  setInterval(() => undefined, 1_000);
}

async function mutex(lockPath: string, counterFile: string, rounds: number): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    const lock = await acquireLock(lockPath, { timeoutMs: 30_000, purpose: 'test-mutex' });
    const value = Number(fs.readFileSync(counterFile, 'utf8') || '0');
    fs.writeFileSync(counterFile, String(value + 1));
    lock.release();
  }
  say('done');
}

async function main(): Promise<void> {
  const [mode, ...args] = process.argv.slice(2);
  if (mode === 'store') await store(args[0], args[1], Number(args[2]), Number(args[3] ?? '0'));
  else if (mode === 'hold') await hold(args[0], args[1], args[2]);
  else if (mode === 'mutex') await mutex(args[0], args[1], Number(args[2]));
  else throw new Error(`unknown mode ${mode}`);
}

main().catch((error: unknown) => {
  fs.writeSync(2, `${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
