import type { Command, CommandSpec } from './command';
import * as blame from './commands/blame';
import * as checkpoints from './commands/checkpoints';
import * as chatContinueOnNewBranch from './commands/chat/continueOnNewBranch';
import * as chatFork from './commands/chat/fork';
import * as chatRestoreBranch from './commands/chat/restoreBranch';
import * as chatStatus from './commands/chat/status';
import * as connect from './commands/connect';
import * as disconnect from './commands/disconnect';
import * as doctor from './commands/doctor';
import * as hook from './commands/hook';
import * as init from './commands/init';
import * as recover from './commands/recover';
import * as redo from './commands/redo';
import * as restore from './commands/restore';
import * as status from './commands/status';
import * as turnBegin from './commands/turn/begin';
import * as turnEnd from './commands/turn/end';
import * as undo from './commands/undo';
import * as undoChange from './commands/undoChange';
import * as undoFile from './commands/undoFile';
import * as versions from './commands/versions';

/**
 * The command line's registry: every command, in the order help lists them. Each is one file under commands/ with
 * its spec (which drives parsing, usage and help: commandParser.ts, commandHelp.ts) beside its run function.
 * Adding a command: its file, its test, and its line here.
 */
const COMMAND_LIST: readonly Command[] = [
  turnBegin,
  turnEnd,
  hook,
  versions,
  status,
  undo,
  undoFile,
  undoChange,
  redo,
  restore,
  checkpoints,
  blame,
  chatStatus,
  chatContinueOnNewBranch,
  chatFork,
  chatRestoreBranch,
  recover,
  connect,
  disconnect,
  doctor,
  init,
];

export const COMMANDS: readonly CommandSpec[] = COMMAND_LIST.map((c) => c.spec);

const BY_NAME = new Map(COMMAND_LIST.map((c) => [c.spec.name, c]));

/** The command of a parsed command line (its name comes from COMMANDS). */
export function commandNamed(name: string): Command {
  const command = BY_NAME.get(name);
  if (!command) throw new Error(`not a command: ${name}`);
  return command;
}
