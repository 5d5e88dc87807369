/**
 * Content-free structured logging. Events carry ids, phases, reasons and counts only: never prompts,
 * file contents, file names, remote URLs or raw git output. Field values are restricted to primitives.
 */
export type LogValue = string | number | boolean | null | undefined;
export type LogFields = Readonly<Record<string, LogValue>>;

export interface EventLog {
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
}

export const silentLog: EventLog = { info() {}, warn() {}, error() {} };

/**
 * Renders an event as one line, `event key=value …`, for the CLI's stderr (with --verbose) and the Output
 * channel.
 */
export function formatEvent(event: string, fields: LogFields = {}): string {
  const parts = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' && /\s/.test(v) ? JSON.stringify(v) : String(v)}`);
  return [event, ...parts].join(' ');
}
