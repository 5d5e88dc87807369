// The classifier's cheap first test (destructiveCommand/), in a module of its own so that the CLI's small entry
// (cli/entry.ts, through toolShortcut.ts) can answer most pre-tool events before any other hook code loads.

/**
 * Every program the classifier recognises, by a name that appears in the text whenever the program runs (unless spelt
 * with quotes or escapes inside the name, `r\m`, which is not recognised either).
 */
const MENTIONS = ['rm', 'git', 'find', 'mv', 'cp', 'dd', 'truncate', 'shred', 'unlink', 'rimraf'];

/** Whether `text` may run a command the classifier recognises: false means it certainly does not. */
export function mayMention(text: string): boolean {
  for (const name of MENTIONS) if (text.includes(name)) return true;
  return false;
}
