import type { RepoContext } from '../context';
import { AgentCommitRecord, agentCommits, refsUnder } from '../git/history';
import { BASE_REF_PREFIX } from './turnLedger';

/**
 * After a corrupt state file was moved aside: re-creates chats and completed turns from the `Agent-Turn` /
 * `Agent-Chat` trailers of `[Agent]` commits on local branches, and base snapshots from their private refs.
 * Prompts are gone with the old file; the commit subject's summary stands in for them. Returns the turns recovered.
 */
export async function rebuildFromTrailers(ctx: RepoContext): Promise<number> {
  let turns: AgentCommitRecord[];
  let bases: Map<string, string>;
  try {
    [turns, bases] = await Promise.all([agentCommits(ctx.repo), refsUnder(ctx.repo, BASE_REF_PREFIX)]);
  } catch {
    return 0; // unborn repository: nothing to recover
  }
  // Turns the history archive holds are known too (archived rows never change, so reading them first is safe).
  const known = await ctx.store.read(
    (r) =>
      new Set(turns.filter((t) => r.get('SELECT 1 AS x FROM turns WHERE id = ?', [t.turnId])).map((t) => t.turnId)),
    { history: true },
  );
  return ctx.store.transaction((tx) => {
    let recovered = 0;
    for (const t of turns) {
      if (known.has(t.turnId) || tx.get('SELECT 1 AS x FROM turns WHERE id = ?', [t.turnId])) continue;
      if (!tx.get('SELECT 1 AS x FROM chats WHERE id = ?', [t.chatId])) {
        tx.run('INSERT INTO chats (id, created_at, updated_at) VALUES (?, ?, ?)', [t.chatId, t.time, t.time]);
      }
      const seq =
        (tx.get<{ s: number | null }>('SELECT MAX(seq) AS s FROM turns WHERE chat_id = ?', [t.chatId])?.s ?? 0) + 1;
      tx.run(
        `INSERT INTO turns (id, chat_id, seq, prompt, recovery, terminal_outcome, branch, base_head, base_commit, ` +
          `version_commit, created_at, ended_at)
              VALUES (?, ?, ?, ?, 'terminal', 'completed', ?, ?, ?, ?, ?, ?)`,
        [
          t.turnId,
          t.chatId,
          seq,
          t.subject.replace(/^\[Agent\] /, ''),
          t.branch,
          t.parent,
          bases.get(t.turnId) ?? t.parent,
          t.oid,
          t.time,
          t.time,
        ],
      );
      recovered++;
    }
    return recovered;
  });
}
