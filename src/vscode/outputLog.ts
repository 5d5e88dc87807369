import * as vscode from 'vscode';
import { EventLog, formatEvent } from '../core/log';

/** Recent event lines, kept so the extension-host tests can check the log stays content-free. */
export const RECENT_LOG_COMMAND = 'agentVersions._test.recentLog';
const RECENT_LIMIT = 500;

/** The content-free event log (docs/product-contract.md §9) on a LogOutputChannel named "Agent Version History". */
export function createOutputLog(channel: vscode.LogOutputChannel): { log: EventLog; recent: () => string[] } {
  const recent: string[] = [];
  const keep = (line: string) => {
    recent.push(line);
    if (recent.length > RECENT_LIMIT) recent.shift();
    return line;
  };
  return {
    log: {
      info: (event, fields) => channel.info(keep(formatEvent(event, fields))),
      warn: (event, fields) => channel.warn(keep(formatEvent(event, fields))),
      error: (event, fields) => channel.error(keep(formatEvent(event, fields))),
    },
    recent: () => [...recent],
  };
}
