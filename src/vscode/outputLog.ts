import * as vscode from 'vscode';
import { EventLog, formatEvent } from '../core/log';

/** The content-free event log (SPEC §9) on a LogOutputChannel named "Agent Version History". */
export function createOutputLog(channel: vscode.LogOutputChannel): EventLog {
  return {
    info: (event, fields) => channel.info(formatEvent(event, fields)),
    warn: (event, fields) => channel.warn(formatEvent(event, fields)),
    error: (event, fields) => channel.error(formatEvent(event, fields)),
  };
}
