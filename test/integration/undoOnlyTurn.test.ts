import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentVersionHistoryApi } from '../../src/vscode/extensionApi';
import { git } from '../support/gitFixtures';

const EXTENSION_ID = 'agent-version-history.agent-version-history';

async function api(): Promise<AgentVersionHistoryApi> {
  const ext = vscode.extensions.getExtension<AgentVersionHistoryApi>(EXTENSION_ID);
  assert.ok(ext);
  return ext.activate();
}

function folder(): string {
  const f = vscode.workspace.workspaceFolders?.[0];
  assert.ok(f);
  return f.uri.fsPath;
}

async function turn(
  avh: AgentVersionHistoryApi,
  repo: string,
  chatId: string,
  prompt: string,
  files: Record<string, string>,
): Promise<{ turnId: string; version: string }> {
  const { turnId } = await avh.beginTurn({ chatId, prompt, agent: 'ext-host-test', chatTitle: chatId });
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(repo, file), text);
  const { version } = await avh.endTurn(turnId, 'completed');
  assert.ok(version, `${prompt} made a version`);
  return { turnId, version };
}

const subject = (repo: string) => git(repo, 'log', '-1', '--format=%s').trim();

const ROOT = path.resolve(__dirname, '../../..');
/** The scrubbed repository folder of the captured payloads (test/fixtures/hooks). */
const CAPTURED_REPO = '/home/user/work/repo';

/** One hook event through the shipped CLI, from an agent's captured payload pointed at `repo`, in chat `session`. */
function hook(agent: string, name: string, repo: string, session: string): { turnId?: string; version?: string } {
  const text = fs
    .readFileSync(path.join(ROOT, 'test/fixtures/hooks', name), 'utf8')
    .split(CAPTURED_REPO)
    .join(repo);
  const input = JSON.stringify({ ...(JSON.parse(text) as object), cwd: repo, session_id: session });
  const r = spawnSync(process.execPath, [path.join(ROOT, 'dist/cli.js'), 'hook', agent, '--json'], {
    cwd: repo,
    input,
    encoding: 'utf8',
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', COPILOT_CLI: '' },
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { turnId?: string; version?: string };
}
const exists = (repo: string, file: string) => fs.existsSync(path.join(repo, file));

describe('Undo Only This Turn (API) and Undo This File (command) in real VS Code', function () {
  this.timeout(60_000);

  it('undoTurn(turnId, { only: "turn" }) keeps the other chat\'s later turn; bad input is refused with nothing changed', async () => {
    const avh = await api();
    const repo = folder();
    const a1 = await turn(avh, repo, 'int-A', 'int A1', { 'int-a1.txt': 'from A1\n' });
    const b1 = await turn(avh, repo, 'int-B', 'int B1', { 'int-b1.txt': 'from B1\n' });
    const headBefore = git(repo, 'rev-parse', 'HEAD').trim();
    await assert.rejects(avh.undoTurn('nope'), /turnId/);
    await assert.rejects(avh.undoTurn(a1.turnId, { only: 'half' as 'turn' }), /only must be 'turn' or 'everything'/);
    assert.equal(git(repo, 'rev-parse', 'HEAD').trim(), headBefore);
    const r = await avh.undoTurn(a1.turnId, { only: 'turn' });
    assert.deepEqual([r.result, r.scope], ['restored', 'turn']);
    assert.equal(r.version, git(repo, 'rev-parse', 'HEAD').trim());
    assert.equal(subject(repo), '[Revert] Undid turn "int A1"');
    assert.equal(exists(repo, 'int-a1.txt'), false, 'A1 undone');
    assert.equal(fs.readFileSync(path.join(repo, 'int-b1.txt'), 'utf8'), 'from B1\n', 'B1, which came later, stays');
    assert.equal(git(repo, 'status', '--porcelain').trim(), '');
    await assert.rejects(avh.undoTurn(a1.turnId), /already undone/);
    const versions = await avh.getVersions({ limit: 1 });
    assert.equal(versions[0].kind, 'restore');
    // Leave no second chat with undoable turns behind (the palette Undo would ask which chat).
    const b = await avh.undoTurn(b1.turnId);
    assert.equal(b.result, 'restored');
    assert.equal(exists(repo, 'int-b1.txt'), false);
  });

  it('undoTurn of a turn whose file another chat may have edited (its shell ran meanwhile) is refused naming them; confirmOtherChats: true undoes it', async () => {
    const avh = await api();
    const repo = folder();
    fs.writeFileSync(path.join(repo, 'int-shared.txt'), 'shared before\n');
    git(repo, 'add', 'int-shared.txt');
    git(repo, '-c', 'user.name=Test', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'shared');
    const a = 'aaaaaaaa-int0-4edb-b5e7-f35f493e58ea';
    const b = 'bbbbbbbb-int0-7ca2-a02f-14d8e7a2bf1d';
    const begunA = hook('claude-code', 'claude-code/UserPromptSubmit.json', repo, a);
    const begunB = hook('codex', 'codex/UserPromptSubmit.json', repo, b);
    fs.writeFileSync(path.join(repo, 'int-shared.txt'), 'shared, by a shell of chat B\n');
    hook('codex', 'codex/PostToolUse-Bash.json', repo, b);
    assert.ok(hook('claude-code', 'claude-code/Stop.json', repo, a).version, 'A made a version');
    fs.writeFileSync(path.join(repo, 'int-later-b.txt'), 'B\n');
    assert.ok(hook('codex', 'codex/Stop.json', repo, b).version, 'B made a later version');
    const headBefore = git(repo, 'rev-parse', 'HEAD').trim();
    await assert.rejects(
      avh.undoTurn(begunA.turnId!, { only: 'turn', confirmOtherChats: 'yes' as unknown as boolean }),
      {
        message: 'confirmOtherChats must be true or false.',
      },
    );
    await assert.rejects(avh.undoTurn(begunA.turnId!, { only: 'turn' }), (error: Error & { reason?: string }) => {
      assert.equal(error.reason, 'confirmation-required');
      const details = (error as unknown as { details: { otherChats: string; files: string } }).details;
      assert.equal(details.otherChats, `codex chat ${b.slice(0, 8)}`);
      assert.equal(details.files, 'int-shared.txt');
      return true;
    });
    assert.equal(git(repo, 'rev-parse', 'HEAD').trim(), headBefore, 'the refusal changed nothing');
    const r = await avh.undoTurn(begunA.turnId!, { only: 'turn', confirmOtherChats: true });
    assert.deepEqual([r.result, r.scope], ['restored', 'turn']);
    assert.equal(fs.readFileSync(path.join(repo, 'int-shared.txt'), 'utf8'), 'shared before\n');
    assert.equal(fs.readFileSync(path.join(repo, 'int-later-b.txt'), 'utf8'), 'B\n', "B's later turn stays");
    // Leave no second chat with undoable turns behind (the palette Undo would ask which chat).
    assert.equal((await avh.undoTurn(begunB.turnId!, { only: 'turn' })).result, 'restored');
    assert.equal(fs.existsSync(path.join(repo, 'int-later-b.txt')), false);
  });

  it("Undo This File from the turn's diff document puts that path back; the rest of the turn stays", async () => {
    const avh = await api();
    const repo = folder();
    fs.writeFileSync(path.join(repo, 'int-c1.txt'), 'c1 before\n');
    fs.writeFileSync(path.join(repo, 'int-c2.txt'), 'c2 before\n');
    git(repo, 'add', 'int-c1.txt', 'int-c2.txt');
    git(repo, '-c', 'user.name=Test', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'two files');
    const t = await turn(avh, repo, 'int-C', 'int C1 edits two files', {
      'int-c1.txt': 'c1 by agent\n',
      'int-c2.txt': 'c2 by agent\n',
    });
    // The right side of the turn's diff, as Show Turn Changes opens it.
    const uri = vscode.Uri.from({
      scheme: 'agent-version',
      path: '/int-c1.txt',
      query: JSON.stringify({ root: repo, oid: t.version }),
    });
    await vscode.commands.executeCommand('agentVersions.undoFile', uri);
    assert.equal(fs.readFileSync(path.join(repo, 'int-c1.txt'), 'utf8'), 'c1 before\n');
    assert.equal(fs.readFileSync(path.join(repo, 'int-c2.txt'), 'utf8'), 'c2 by agent\n');
    assert.equal(subject(repo), '[Revert] Undid int-c1.txt of turn "int C1 edits two files"');
    assert.equal(git(repo, 'diff-tree', '--no-commit-id', '--name-only', '-r', 'HEAD^', 'HEAD').trim(), 'int-c1.txt');
    // A document that is not a turn's version changes nothing.
    const head = git(repo, 'rev-parse', 'HEAD').trim();
    await vscode.commands.executeCommand('agentVersions.undoFile', vscode.Uri.file(path.join(repo, 'int-c2.txt')));
    assert.equal(git(repo, 'rev-parse', 'HEAD').trim(), head);
    const rest = await avh.undoTurn(t.turnId, { only: 'turn' });
    assert.equal(rest.scope, 'turn');
    assert.equal(fs.readFileSync(path.join(repo, 'int-c2.txt'), 'utf8'), 'c2 before\n');
  });
});
