#!/usr/bin/env bash
# Installs what the real-agent tests need (test/agents, `npm test`'s real-agent step), outside the project's
# node_modules: Claude Code, Codex, GitHub Copilot CLI, Gemini CLI and opencode from npm at pinned versions, each in
# its own folder with its own package.json, the Claude Agent SDK beside Claude Code (as a user installs it for
# `chat fork`), and tmux (Debian apt) for their interactive modes. npm registry and apt only. Idempotent: every
# install leaves a stamp, so a rerun only checks files (well under 2 s).
set -euo pipefail

CLAUDE_CODE_VERSION=2.1.197
CLAUDE_AGENT_SDK_VERSION=0.3.197
CODEX_VERSION=0.171.0
COPILOT_CLI_VERSION=1.0.102
GEMINI_CLI_VERSION=0.61.0
OPENCODE_VERSION=1.18.33

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BASE="${AVH_AGENTS_DIR:-$ROOT/.vscode-test/agents}"
START=$SECONDS

SETUP_TAG=agents-setup
# shellcheck source=../lib/setupCommon.sh
source "$ROOT/scripts/lib/setupCommon.sh"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) PLATFORM=linux-x64 CODEX_TRIPLE=x86_64-unknown-linux-musl ;;
  Linux-aarch64) PLATFORM=linux-arm64 CODEX_TRIPLE=aarch64-unknown-linux-musl ;;
  Darwin-x86_64) PLATFORM=darwin-x64 CODEX_TRIPLE=x86_64-apple-darwin ;;
  Darwin-arm64) PLATFORM=darwin-arm64 CODEX_TRIPLE=aarch64-apple-darwin ;;
  *) die "no agent binaries for $(uname -s)-$(uname -m)" ;;
esac

# The version checks run with a throwaway HOME (and the shared cache Copilot CLI unpacks its JS into), so they
# never create ~/.claude, ~/.codex, ~/.copilot, ~/.gemini or ~/.local/share/opencode for the user running the setup.
version_of() { # command…
  local home
  home="$(mktemp -d "$BASE/.version-check-XXXXXX")"
  HOME="$home" CODEX_HOME="$home/.codex" XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share" \
    XDG_STATE_HOME="$home/.local/state" XDG_CACHE_HOME="$BASE/cache" COPILOT_AUTO_UPDATE=false \
    "$@" --version 2>/dev/null | head -n 1 || true
  rm -rf "$home"
}

# install <name> <dir> <package@version> <file that must exist> <expected first --version line> <command…>
# --ignore-scripts: the tests run each platform package's own binary (or Gemini's bundle under this Node), so the
# postinstalls that only copy or link that binary over a launcher stub are not needed; npm still installs the
# optional platform package. Gemini's optional native modules (node-pty, keytar) are not needed by the tests.
install() {
  local name="$1" dir="$2" spec="$3" file="$4" want="$5"
  shift 5
  if stamp_ok "$dir/.avh-stamp" "$spec" && [ -e "$file" ]; then
    say "$name: present"
    return
  fi
  begin "$name: npm install $spec into $dir"
  rm -rf "$dir"
  own_package "$dir" "avh-agent-$name"
  (cd "$dir" && npm_q install --ignore-scripts "$spec")
  [ -e "$file" ] || die "$name: $file missing (did npm skip the optional platform package?)"
  local got
  got="$(version_of "$@")"
  [ "$got" = "$want" ] || die "$name: unexpected version: '$got' (want '$want')"
  stamp_set "$dir/.avh-stamp" "$spec"
  took
}

mkdir -p "$BASE"
CLAUDE_BIN="$BASE/claude-code/node_modules/@anthropic-ai/claude-code-$PLATFORM/claude"
install claude-code "$BASE/claude-code" "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" "$CLAUDE_BIN" \
  "$CLAUDE_CODE_VERSION (Claude Code)" "$CLAUDE_BIN"
# The Claude Agent SDK, in the same node_modules as Claude Code: `chat fork` of a Claude Code turn loads it from the
# node_modules folder holding the `claude` on PATH (src/cli/conversations/claudeSdk.ts). Not a dependency of ours:
# its license does not allow redistribution, so a user installs it beside Claude Code, and so do the tests.
CLAUDE_SDK_SPEC="@anthropic-ai/claude-agent-sdk@$CLAUDE_AGENT_SDK_VERSION"
CLAUDE_SDK_PACKAGE="$BASE/claude-code/node_modules/@anthropic-ai/claude-agent-sdk/package.json"
if stamp_ok "$BASE/claude-code/.avh-stamp-sdk" "$CLAUDE_SDK_SPEC" && [ -e "$CLAUDE_SDK_PACKAGE" ]; then
  say "claude-agent-sdk: present"
else
  begin "claude-agent-sdk: npm install $CLAUDE_SDK_SPEC into $BASE/claude-code"
  (cd "$BASE/claude-code" && npm_q install --ignore-scripts "$CLAUDE_SDK_SPEC")
  got="$(node -p 'require(process.argv[1]).version' "$CLAUDE_SDK_PACKAGE")"
  [ "$got" = "$CLAUDE_AGENT_SDK_VERSION" ] || die "claude-agent-sdk: unexpected version: '$got'"
  [ -e "$CLAUDE_BIN" ] || die "claude-agent-sdk: installing it removed $CLAUDE_BIN"
  stamp_set "$BASE/claude-code/.avh-stamp-sdk" "$CLAUDE_SDK_SPEC"
  took
fi
CODEX_BIN="$BASE/codex/node_modules/@openai/codex-$PLATFORM/vendor/$CODEX_TRIPLE/bin/codex"
install codex "$BASE/codex" "@openai/codex@$CODEX_VERSION" "$CODEX_BIN" "codex-cli $CODEX_VERSION" "$CODEX_BIN"
COPILOT_BIN="$BASE/copilot-cli/node_modules/@github/copilot-$PLATFORM/copilot"
install copilot-cli "$BASE/copilot-cli" "@github/copilot@$COPILOT_CLI_VERSION" "$COPILOT_BIN" \
  "GitHub Copilot CLI $COPILOT_CLI_VERSION." "$COPILOT_BIN"
GEMINI_JS="$BASE/gemini/node_modules/@google/gemini-cli/bundle/gemini.js"
install gemini "$BASE/gemini" "@google/gemini-cli@$GEMINI_CLI_VERSION" "$GEMINI_JS" \
  "$GEMINI_CLI_VERSION" node "$GEMINI_JS"
OPENCODE_BIN="$BASE/opencode/node_modules/opencode-$PLATFORM/bin/opencode"
install opencode "$BASE/opencode" "opencode-ai@$OPENCODE_VERSION" "$OPENCODE_BIN" \
  "$OPENCODE_VERSION" "$OPENCODE_BIN"

# tmux drives the interactive modes (Escape, Ctrl+C as a user presses them).
if command -v tmux >/dev/null; then
  say "tmux: present"
else
  [ "$(id -u)" = 0 ] || die "tmux missing and not root: run 'sudo apt-get install -y tmux'"
  begin "tmux: apt-get install"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq tmux >/dev/null
  command -v tmux >/dev/null || die "apt-get installed tmux but it is not on PATH"
  took
fi

say "ready in $((SECONDS - START)) s: $BASE (claude-code $CLAUDE_CODE_VERSION," \
  "claude-agent-sdk $CLAUDE_AGENT_SDK_VERSION, codex $CODEX_VERSION," \
  "copilot-cli $COPILOT_CLI_VERSION, gemini $GEMINI_CLI_VERSION, opencode $OPENCODE_VERSION)"
