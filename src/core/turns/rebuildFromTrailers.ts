import type { RepoContext } from '../context';
import { runGit } from '../git/gitRunner';
import { BASE_REF_PREFIX } from './turnLedger';

/**
 * After a corrupt state file was moved aside: re-creates chats and completed turns from the `Agent-Turn` /
 * `Agent-Chat` trailers of `[Agent]` commits on local branches, and base snapshots from their private refs.
 * Prompts are gone with the old file; the commit subject's summary stands in for them. Returns the turns recovered.
 */
export async function rebuildFromTrailers(ctx: RepoContext): Promise<number> {
  const F = '\x1f';
  const R = '\x1e';
  let log = '';
  let refs = '';
  try {
    [{ stdout: log }, { stdout: refs }] = await Promise.all([
      runGit(ctx.repo.root, ['log', '--branches', '--source', '--no-color', '--grep=^\\[Agent\\] ',
        `--format=%H${F}%P${F}%ct${F}%s${F}%(trailers:key=Agent-Turn,valueonly,separator=%x2c)${F}%(trailers:key=Agent-Chat,valueonly,separator=%x2c)${F}%S${R}`]),
      runGit(ctx.repo.root, ['for-each-ref', '--format=%(refname) %(objectname)', BASE_REF_PREFIX]),
    ]);
  } catch {
    return 0; // unborn repository: nothing to recover
  }
  const bases = new Map<string, string>();
  for (const line of refs.split('\n')) {
    const [ref, oid] = line.split(' ');
    if (ref && oid) bases.set(ref.slice(BASE_REF_PREFIX.length), oid);
  }
  const turns = log.split(R).map((r) => r.replace(/^\n/, '')).filter(Boolean).map((record) => {
    const [oid, parents, time, subject, turnId, chatId, source] = record.split(F);
    const branch = source?.trim().replace(/^refs\/heads\//, '') || null;
    return { oid, parent: parents.split(' ')[0] || null, time: Number(time) * 1000, subject, turnId: turnId.trim(), chatId: chatId.trim(), branch };
  }).filter((t) => t.turnId && t.chatId).reverse();
  return ctx.store.transaction((tx) => {
    let recovered = 0;
    for (const t of turns) {
      if (tx.get('SELECT 1 AS x FROM turns WHERE id = ?', [t.turnId])) continue;
      if (!tx.get('SELECT 1 AS x FROM chats WHERE id = ?', [t.chatId])) {
        tx.run('INSERT INTO chats (id, created_at, updated_at) VALUES (?, ?, ?)', [t.chatId, t.time, t.time]);
      }
      const seq = (tx.get<{ s: number | null }>('SELECT MAX(seq) AS s FROM turns WHERE chat_id = ?', [t.chatId])?.s ?? 0) + 1;
      tx.run(`INSERT INTO turns (id, chat_id, seq, prompt, recovery, terminal_outcome, branch, base_head, base_commit, version_commit, created_at, ended_at)
              VALUES (?, ?, ?, ?, 'terminal', 'completed', ?, ?, ?, ?, ?, ?)`,
      [t.turnId, t.chatId, seq, t.subject.replace(/^\[Agent\] /, ''), t.branch, t.parent, bases.get(t.turnId) ?? t.parent, t.oid, t.time, t.time]);
      recovered++;
    }
    return recovered;
  });
}
