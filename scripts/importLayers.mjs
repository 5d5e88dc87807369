// The layers of src/, lowest first: a file may import files of its own layer and of layers below it, never one
// above (docs/design.md, "Layers"). The rank of a file is that of the longest entry its path starts with. Checked by
// scripts/checkImportCycles.mjs (lint and `npm test`) as the rule `layers/no-upward-import`.
export const LAYERS = [
  // The core's base: plain values and helpers that import nothing of ours.
  ['src/core/errors.ts', 'src/core/log.ts', 'src/core/outcomes.ts', 'src/core/failpoints.ts', 'src/core/sha256.ts'],
  ['src/core/randomId.ts', 'src/core/publicError.ts'],
  // The domain's vocabulary, pure data: version subjects, a turn's effect, the restore's phases, the history's rows.
  ['src/core/domain/'],
  // The durable store (sql.js, journal, lock files): knows no git.
  ['src/core/store/'],
  // git: one process runner, the repository's files, the commit path and the secret filter it applies.
  ['src/core/git/'],
  ['src/core/context.ts'],
  // The operation log: kinds, gate, lease, run, operation records, recovery latch.
  ['src/core/operations/'],
  ['src/core/chats/'],
  ['src/core/turns/'],
  ['src/core/blame/'],
  ['src/core/restore/'],
  // Recovery, reconciliation of what a crash left, and the user's choices about secrets (operations of their own).
  ['src/core/recovery/', 'src/core/secrets/'],
  // The history as the view shows it.
  ['src/core/history/'],
  // The façade: what the CLI and the extension act through (facade/: the groups of its operations it delegates to).
  ['src/core/versionHistory.ts', 'src/core/facade/', 'src/core/repoContextOf.ts', 'src/core/diagnostics.ts'],
  ['src/cli/'],
  ['src/vscode/'],
  ['src/extension.ts'],
];

/** Whether a table entry names `file`: a folder (ending in `/`) everything under it, a file itself. */
function names(entry, file) {
  return entry.endsWith('/') ? file.startsWith(entry) : file === entry;
}

/** The rank of `file` (a path from the repository root, `/`-separated), or null when no layer names it. */
export function rankOf(file, layers = LAYERS) {
  let best = null;
  let bestLength = -1;
  layers.forEach((entries, rank) => {
    for (const entry of entries) {
      if (names(entry, file) && entry.length > bestLength) {
        best = rank;
        bestLength = entry.length;
      }
    }
  });
  return best;
}

/**
 * The imports that go up: `edges` maps each file to the files it imports. Each is `{ from, to, fromRank, toRank }`.
 * A file no layer names is itself a finding (`unranked`): every file of src/ belongs to a layer.
 */
export function upwardImports(edges, layers = LAYERS) {
  const findings = [];
  for (const [from, targets] of edges) {
    const fromRank = rankOf(from, layers);
    if (fromRank === null) {
      findings.push({ from, unranked: true });
      continue;
    }
    for (const to of targets) {
      const toRank = rankOf(to, layers);
      if (toRank !== null && toRank > fromRank) findings.push({ from, to, fromRank, toRank });
    }
  }
  return findings;
}

/**
 * What src/cli and src/vscode may import of the core: the façade (versionHistory.ts, which also re-exports the
 * types and helpers they use, and facade/), the base and the domain's vocabulary, and these named public modules —
 * never another of the core's internals (the rule `layers/core-through-facade`).
 */
export const CORE_PUBLIC = [
  'src/core/versionHistory.ts',
  'src/core/facade/',
  'src/core/diagnostics.ts',
  'src/core/errors.ts',
  'src/core/log.ts',
  'src/core/outcomes.ts',
  'src/core/failpoints.ts',
  'src/core/sha256.ts',
  'src/core/randomId.ts',
  'src/core/publicError.ts',
  'src/core/domain/',
  // The words the view, the palette and the CLI share.
  'src/core/history/wording.ts',
  // Finding and creating a repository, before there is a façade to open.
  'src/core/git/repository.ts',
  'src/core/git/initRepository.ts',
  // Writing a file so a crash leaves the old or the new one (the agents' settings, the launcher script).
  'src/core/store/atomicWrite.ts',
  // Where a turn sits in its agent's conversation: the agents' adapters record it (in the hook's own bundle).
  'src/core/chats/turnAnchors.ts',
  // The recovery notice's state machine, the extension's own (through the façade, every CLI bundle would build it).
  'src/core/recovery/recoveryMachine.ts',
];

/**
 * The hook fast path (dist/cli.js's entry and dist/cliHook.js) reaches below the façade by design: it answers a hook
 * event in one git status, without loading sql.js or the façade (docs/design/hooks-and-fast-path.md).
 */
export const FAST_PATH = ['src/cli/entry.ts', 'src/cli/entryRun.ts', 'src/cli/hooks/'];

const under = (file, entries) => entries.some((entry) => names(entry, file));

/** The imports from src/cli or src/vscode into the core's internals: `{ from, to }` each. */
export function internalImports(edges) {
  const findings = [];
  for (const [from, targets] of edges) {
    if (!/^src\/(cli|vscode)\//.test(from) || under(from, FAST_PATH)) continue;
    for (const to of targets) if (to.startsWith('src/core/') && !under(to, CORE_PUBLIC)) findings.push({ from, to });
  }
  return findings;
}
