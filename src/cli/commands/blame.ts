import * as path from 'node:path';
import { CommandContext, CommandOutput, CommandSpec, withHistory } from '../command';
import { localTime, terminalSafe } from '../output';
import { type FileAttribution, type LineRange, ownerBlocks } from '../../core/versionHistory';

export const spec: CommandSpec = {
  name: 'blame',
  args: [{ name: 'file' }],
  options: ['rev'],
  summary: 'which agent turn wrote each line of a file',
  description:
    'Shows, for each block of lines of the file (the working tree copy, or the file as of --rev), the agent turn ' +
    'that wrote it — agent, chat, the prompt’s first line and when — or, for lines no turn wrote, the commit ' +
    'and its author as git says. Your own edits made before a turn stay yours, lines a turn is writing right now ' +
    '(or a stopped turn’s partial work) are that turn’s before any commit, lines a restore brought back keep ' +
    'their author, and lines undone are no one’s. Renames are followed as git follows them; binary files are ' +
    'refused. The file is relative to the current folder.',
  example: 'agent-versions blame src/app.ts --json',
  json:
    '{"path": string, "rev": string|null, "lines": number, "eol": "lf"|"crlf"|"mixed"|"none", ' +
    '"uncommittedTurn": string|null, "ranges": [{"start": number, "end": number, ' +
    '"kind": "turn"|"commit"|"pre-turn"|"uncommitted", "turn": {"id", "chatId", "chatTitle", "agent", "summary", ' +
    '"startedAt", "endedAt", "outcome", "running", "undone", "via"}|null, "commit": string|null, "author": string, ' +
    '"time": number (seconds), "subject": string, "origin": {"path", "line"}}]}',
};

export function run(c: CommandContext): Promise<CommandOutput> {
  return withHistory(c, async (history) => {
    const attribution = await history.attributeFile(path.resolve(c.cwd, c.args[0]), {
      ...(c.values.rev !== undefined ? { rev: c.values.rev } : {}),
    });
    return { json: blameJson(attribution), text: blameText(attribution) };
  });
}

export function blameJson(a: FileAttribution): Record<string, unknown> {
  return {
    path: a.path,
    rev: a.rev,
    lines: a.lineCount,
    eol: a.eol,
    uncommittedTurn: a.uncommittedTurn,
    ranges: a.ranges.map((r) => ({
      start: r.start,
      end: r.end,
      kind: r.kind,
      turn: r.turn,
      commit: r.commit,
      author: r.author,
      time: r.time,
      subject: r.subject,
      origin: r.origin,
    })),
  };
}

/** One row per block of lines with the same owner: `LINES  WHO  WHEN  COMMIT  WHAT`. */
export function blameText(a: FileAttribution): string {
  if (a.lineCount === 0) return `${terminalSafe(a.path)} is empty.`;
  const byStart = new Map(a.ranges.map((r) => [r.start, r]));
  const rows = ownerBlocks(a).map((b) => {
    const r = byStart.get(b.start)!;
    return [
      b.start === b.end ? `${b.start}` : `${b.start}-${b.end}`,
      who(r),
      localTime(r.time),
      r.commit?.slice(0, 10) ?? '',
      what(r),
    ];
  });
  const header = ['LINES', 'WHO', 'WHEN', 'COMMIT', 'WHAT'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

function who(r: LineRange): string {
  if (r.turn) return terminalSafe(`${r.turn.agent ?? 'agent'} (chat ${r.turn.chatTitle ?? r.turn.chatId})`);
  if (r.kind === 'pre-turn') return terminalSafe(`${r.author} (uncommitted then)`);
  if (r.kind === 'uncommitted') return 'you (uncommitted)';
  return terminalSafe(r.author);
}

function what(r: LineRange): string {
  if (r.turn) {
    const state = r.turn.running ? ' (running)' : r.turn.via === 'uncommitted' ? ' (not a version yet)' : '';
    return terminalSafe(`turn "${r.turn.summary}"${state}`);
  }
  if (r.kind === 'pre-turn') return 'edits made before a turn began';
  return terminalSafe(r.subject);
}
