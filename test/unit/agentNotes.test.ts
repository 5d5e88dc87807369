/**
 * Undo that the agent hears about (issue 23, docs/design/agent-notes.md): the note's text (pure), and through real
 * processes in real git repositories — the command entry (tsc output of src/cli/entry.ts: the test build's
 * AVH_HOOK_PATH_LOG says which path each event took; AVH_FAILPOINT kills a hook where a crash would hurt) — that
 * every chat of the branch hears of an Undo, Redo or Restore that changed files exactly once, at its next prompt,
 * through its agent's context channel, and that nothing is printed otherwise.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChatNote } from '../../src/core/chats/chatNotes';
import { parseNote } from '../../src/core/chats/chatNotes';
import { NOTE_PATHS_SHOWN, noteText, noteTime } from '../../src/core/chats/noteText';
import { DurableStore } from '../../src/core/store/durableStore';
import {
  assertNothingLost,
  cleanupTempDirs,
  contentInventory,
  git,
  makeRepo,
  read,
  tempDir,
  testGitEnv,
  write,
} from '../support/gitFixtures';

const ENTRY = path.resolve(__dirname, '../../src/cli/entry.js');

const at = (h: number, m: number) => new Date(2026, 11, 1, h, m).getTime();
const NOW = at(15, 0);

function note(partial: Partial<ChatNote>): ChatNote {
  return { kind: 'undo', scope: 'everything', turn: null, paths: ['a.txt'], pathCount: 1, at: NOW, ...partial };
}

describe('agent notes: the text a chat’s agent reads after an Undo, Redo or Restore', () => {
  it('names the chat’s own turn by its number and time, the files, and says to re-read them and not re-apply', () => {
    const text = noteText(
      [note({ turn: { chatId: 'c1', seq: 3, at: at(14, 2) }, paths: ['src/a.ts', 'b.md'] })],
      'c1',
      NOW,
    );
    assert.equal(
      text,
      'Agent Version History: since you last saw this repository, the user took the files back to before your ' +
        'turn 3 (the turn of 14:02). These files changed on disk: src/a.ts, b.md. Re-read them before relying on ' +
        'what you remember of them, and do not re-apply the undone change unless the user asks for it.',
    );
  });

  it('another chat’s turn is named by its number and time only; Redo and Restore do not say "undone"', () => {
    const other = { chatId: 'other', seq: 2, at: at(9, 5) };
    const redo = noteText([note({ kind: 'redo', turn: other })], 'c1', NOW)!;
    assert.match(redo, /the user redid turn 2 of another chat \(09:05\), after undoing it\./);
    assert.doesNotMatch(redo, /re-apply/);
    const restore = noteText([note({ kind: 'restore', turn: null, target: 'abc1234' })], 'c1', NOW)!;
    assert.match(restore, /restored the files to an earlier version \(commit abc1234\)/);
    const only = noteText([note({ scope: 'turn', turn: other })], 'c1', NOW)!;
    assert.match(only, /undid only turn 2 of another chat \(09:05\), keeping the changes made after it\./);
    const file = noteText([note({ scope: 'file', turn: other })], 'c1', NOW)!;
    assert.match(file, /undid turn 2 of another chat \(09:05\) in one file/);
  });

  it('a turn of another day carries its date; several notes become one text, oldest first', () => {
    assert.equal(noteTime(new Date(2026, 10, 30, 8, 1).getTime(), NOW), '2026-11-30 08:01');
    const text = noteText(
      [
        note({ turn: { chatId: 'c1', seq: 1, at: at(10, 0) } }),
        note({ kind: 'redo', turn: { chatId: 'c1', seq: 1, at: at(10, 0) } }),
      ],
      'c1',
      NOW,
    )!;
    assert.match(
      text,
      /changed files with Version History 2 times: \(1\) took the files back .*; \(2\) redid your turn 1/,
    );
    assert.match(text, /These files changed on disk: a\.txt\./);
  });

  it(`names at most ${NOTE_PATHS_SHOWN} paths, then "and N more" (also the paths a note did not keep)`, () => {
    const paths = Array.from({ length: 30 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`);
    const text = noteText([note({ paths, pathCount: 45 })], 'c1', NOW)!;
    assert.match(text, /f19\.txt and 25 more\./);
    assert.doesNotMatch(text, /f20\.txt/);
  });

  it('no notes: no text (the hook prints nothing); a stored note this version cannot read is refused', () => {
    assert.equal(noteText([], 'c1', NOW), null);
    assert.equal(parseNote('{"kind":"undo"}'), null);
    assert.equal(parseNote('not json'), null);
    assert.deepEqual(parseNote(JSON.stringify(note({}))), note({}));
  });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** 'fast engines=N' or 'declined:<reason>' (hook events only). */
  path?: string;
}

let seq = 0;

function cli(repo: string, args: string[], input = '', env: NodeJS.ProcessEnv = {}): Run {
  const log = path.join(tempDir('avh-notelog-'), `path-${seq++}.log`);
  const r = spawnSync(process.execPath, [ENTRY, ...args], {
    cwd: repo,
    input,
    encoding: 'utf8',
    env: { ...testGitEnv(), AVH_HOOK_PATH_LOG: log, ...env },
    timeout: 60_000,
  });
  const logged = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim() : undefined;
  return { code: r.status ?? (r.signal ? -1 : -2), stdout: r.stdout, stderr: r.stderr, path: logged };
}

type AgentName = 'claude-code' | 'codex';

function hook(repo: string, agent: AgentName, event: string, session: string, prompt?: string, env = {}): Run {
  const payload = { hook_event_name: event, session_id: session, cwd: repo, ...(prompt ? { prompt } : {}) };
  return cli(repo, ['hook', agent], JSON.stringify(payload), env);
}

/** A prompt's hook: exit 0 and the note it printed through Claude Code's / Codex's channel (null: nothing printed). */
function prompt(
  repo: string,
  agent: AgentName,
  session: string,
  text: string,
  env = {},
): { note: string | null; run: Run } {
  const run = hook(repo, agent, 'UserPromptSubmit', session, text, env);
  assert.equal(run.code, 0, run.stderr);
  if (run.stdout === '') return { note: null, run };
  const out = JSON.parse(run.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
  assert.equal(out.hookSpecificOutput.hookEventName, 'UserPromptSubmit');
  return { note: out.hookSpecificOutput.additionalContext, run };
}

function stop(repo: string, agent: AgentName, session: string): void {
  const run = hook(repo, agent, 'Stop', session);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, '');
}

function ok(run: Run): Record<string, unknown> {
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

async function noteRows(repo: string): Promise<{ chat_id: string; handed_to: string | null }[]> {
  const { store } = await DurableStore.open(path.join(repo, '.git', 'agent-versions'));
  try {
    return await store.read((r) => r.all('SELECT chat_id, handed_to FROM chat_notes ORDER BY chat_id'));
  } finally {
    await store.close();
  }
}

describe('agent notes: each chat of the branch hears of a restore that changed files, once, next prompt', function () {
  this.timeout(180_000);
  after(cleanupTempDirs);

  it('Undo: the undone chat and another agent’s chat each get one note at their next prompt, then none', async () => {
    const repo = makeRepo();
    write(repo, 'notes.txt', 'the user’s own\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'user');
    // Chat B (Codex) asks a question that changes nothing; chat A (Claude Code) edits files.
    assert.equal(prompt(repo, 'codex', 'chat-b', 'what does notes.txt say?').note, null);
    stop(repo, 'codex', 'chat-b');
    assert.equal(prompt(repo, 'claude-code', 'chat-a', 'SECRET PROMPT OF A: rewrite notes').note, null);
    write(repo, 'notes.txt', 'the agent’s rewrite\n');
    write(repo, 'src/new.ts', 'export {};\n');
    stop(repo, 'claude-code', 'chat-a');
    const before = contentInventory(repo);

    assert.equal(ok(cli(repo, ['undo', '--json'])).result, 'restored');
    assert.equal(read(repo, 'notes.txt'), 'the user’s own\n');

    // A's next prompt: the full path (the restore changed the journal), one note naming its own turn.
    const a = prompt(repo, 'claude-code', 'chat-a', 'next');
    assert.equal(a.run.path, 'declined:stale');
    assert.ok(a.note);
    assert.match(a.note, /took the files back to before your turn 1 \(the turn of \d\d:\d\d\)/);
    assert.match(a.note, /These files changed on disk: notes\.txt, src\/new\.ts\./);
    assert.match(a.note, /do not re-apply the undone change/);
    stop(repo, 'claude-code', 'chat-a');
    // B's next prompt: its facts say a note waits, so the fast path leaves it; A's prompt is never shown to B.
    const b = prompt(repo, 'codex', 'chat-b', 'and now?');
    assert.equal(b.run.path, 'declined:note');
    assert.ok(b.note);
    assert.match(b.note, /took the files back to before turn 1 of another chat \(\d\d:\d\d\)/);
    assert.doesNotMatch(b.note, /SECRET PROMPT|rewrite notes/);
    stop(repo, 'codex', 'chat-b');
    // Exactly once: the prompts after those print nothing, on the fast path again.
    const a2 = prompt(repo, 'claude-code', 'chat-a', 'again');
    assert.equal(a2.note, null);
    assert.equal(a2.run.path, 'fast engines=0');
    assert.equal(prompt(repo, 'codex', 'chat-b', 'again').note, null);
    assert.deepEqual(await noteRows(repo), []);
    assertNothingLost(repo, before);
  });

  it('Redo, Undo This File and Restore each leave a note; an Undo that changed nothing leaves none', async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    prompt(repo, 'claude-code', 'chat-a', 'two files');
    write(repo, 'one.txt', '1\n');
    write(repo, 'two.txt', '2\n');
    stop(repo, 'claude-code', 'chat-a');
    const version = git(repo, 'rev-parse', 'HEAD').trim();
    const turnId = ok(cli(repo, ['undo', '--json'])).turnId as string;
    assert.match(prompt(repo, 'claude-code', 'chat-a', 'x').note ?? '', /before your turn 1/);
    stop(repo, 'claude-code', 'chat-a'); // turn 2: a question (no change)
    ok(cli(repo, ['redo', '--json']));
    const redone = prompt(repo, 'claude-code', 'chat-a', 'y').note ?? '';
    assert.match(
      redone,
      /redid your turn 1 \(the turn of \d\d:\d\d\), after undoing it\. These files changed on disk: one\.txt, two\.txt/,
    );
    assert.doesNotMatch(redone, /re-apply/);
    stop(repo, 'claude-code', 'chat-a');
    ok(cli(repo, ['undo-file', '--turn', turnId, 'two.txt', '--json']));
    const file = prompt(repo, 'claude-code', 'chat-a', 'z').note ?? '';
    assert.match(
      file,
      /undid your turn 1 \(the turn of \d\d:\d\d\) in one file\. These files changed on disk: two\.txt\./,
    );
    stop(repo, 'claude-code', 'chat-a');
    ok(cli(repo, ['restore', version, '--yes', '--json']));
    assert.match(
      prompt(repo, 'claude-code', 'chat-a', 'w').note ?? '',
      /restored the files to the version your turn 1/,
    );
    stop(repo, 'claude-code', 'chat-a');
    // A Restore to what the tree already holds changes nothing: no note.
    const current = git(repo, 'rev-parse', 'HEAD').trim();
    assert.equal(ok(cli(repo, ['restore', current, '--yes', '--json'])).result, 'no-change');
    assert.equal(prompt(repo, 'claude-code', 'chat-a', 'v').note, null);
    assert.deepEqual(await noteRows(repo), []);
    assertNothingLost(repo, before);
  });

  it('a hook killed after the note was handed to its turn but before it printed: the next prompt gets it', async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    prompt(repo, 'claude-code', 'chat-a', 'edit');
    write(repo, 'a.txt', 'agent\n');
    stop(repo, 'claude-code', 'chat-a');
    ok(cli(repo, ['undo', '--json']));
    const killed = hook(repo, 'claude-code', 'UserPromptSubmit', 'chat-a', 'p', {
      AVH_FAILPOINT: 'hook-note:before-print',
    });
    assert.equal(killed.code, -1, 'the failpoint kills the hook');
    assert.equal(killed.stdout, '');
    // The turn was recorded with the note handed to it; nothing printed, so the note is still there.
    assert.equal((await noteRows(repo)).length, 1);
    assert.notEqual((await noteRows(repo))[0].handed_to, null);
    const again = prompt(repo, 'claude-code', 'chat-a', 'p2');
    assert.match(again.note ?? '', /before your turn 1 .*a\.txt/);
    assert.equal(prompt(repo, 'claude-code', 'chat-a', 'p3').note, null);
    assertNothingLost(repo, before);
  });

  it('a restore killed before its completing write: the open that rolls it forward queues the note', async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    prompt(repo, 'claude-code', 'chat-a', 'edit');
    write(repo, 'a.txt', 'agent\n');
    stop(repo, 'claude-code', 'chat-a');
    const killed = cli(repo, ['undo', '--json'], '', { AVH_FAILPOINT: 'turn-store-mutation:before' });
    assert.equal(killed.code, -1, 'the failpoint kills the undo');
    assert.equal(fs.existsSync(path.join(repo, 'a.txt')), false, 'the tree was already restored');
    // The next command settles the restore (reconciliation finishes it) and the note comes with its completion.
    ok(cli(repo, ['status', '--json']));
    assert.equal((await noteRows(repo)).length, 1);
    assert.match(prompt(repo, 'claude-code', 'chat-a', 'p').note ?? '', /before your turn 1 .*a\.txt/);
    assertNothingLost(repo, before);
  });

  it('opencode: a plugin that reads the hook’s stdout gets the note as top-level additionalContext; an older one none', async () => {
    const repo = makeRepo();
    const before = contentInventory(repo);
    const message = (extra: Record<string, unknown>) =>
      cli(
        repo,
        ['hook', 'opencode'],
        JSON.stringify({ hook_event_name: 'chat.message', session_id: 'ses_1', cwd: repo, prompt: 'p', ...extra }),
      );
    const idle = () =>
      cli(
        repo,
        ['hook', 'opencode'],
        JSON.stringify({ hook_event_name: 'session.idle', session_id: 'ses_1', cwd: repo }),
      );
    assert.equal(message({ reads_context: true }).stdout, '');
    write(repo, 'a.txt', 'agent\n');
    assert.equal(idle().code, 0);
    ok(cli(repo, ['undo', '--json']));
    // The plugin of an older version ignores stdout: nothing printed, the note waits.
    const old = message({});
    assert.equal(old.code, 0, old.stderr);
    assert.equal(old.stdout, '');
    assert.equal((await noteRows(repo)).length, 1);
    idle();
    const current = message({ reads_context: true });
    const printed = JSON.parse(current.stdout) as { additionalContext: string };
    assert.deepEqual(Object.keys(printed), ['additionalContext']);
    assert.match(printed.additionalContext, /before your turn 1 .*a\.txt/);
    assert.deepEqual(await noteRows(repo), []);
    assertNothingLost(repo, before);
  });

  it('--json carries the note in the result, not the agent channel; a chat on another branch gets none', async () => {
    const repo = makeRepo();
    git(repo, 'branch', 'side');
    git(repo, 'switch', '-q', 'side');
    prompt(repo, 'claude-code', 'chat-side', 'on side');
    stop(repo, 'claude-code', 'chat-side');
    git(repo, 'switch', '-q', '-');
    prompt(repo, 'claude-code', 'chat-a', 'edit');
    write(repo, 'a.txt', 'agent\n');
    stop(repo, 'claude-code', 'chat-a');
    ok(cli(repo, ['undo', '--json']));
    const payload = JSON.stringify({
      hook_event_name: 'UserPromptSubmit',
      session_id: 'chat-a',
      cwd: repo,
      prompt: 'q',
    });
    const json = ok(cli(repo, ['hook', 'claude-code', '--json'], payload));
    assert.equal(json.action, 'began');
    assert.match(json.note as string, /before your turn 1/);
    assert.deepEqual(await noteRows(repo), []);
  });
});
