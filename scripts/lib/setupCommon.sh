# Shared by scripts/vscode/setup.sh and scripts/agents/setup.sh (sourced after `set -euo pipefail`, with SETUP_TAG
# naming the log prefix): logging with step times, the failure trap, quiet npm, own-package folders and stamps.

say() { printf '[%s] %s\n' "$SETUP_TAG" "$*"; }
T0=$SECONDS
begin() { T0=$SECONDS; say "$*"; }
took() { say "  done in $((SECONDS - T0)) s"; }
die() { printf '[%s] ERROR: %s\n' "$SETUP_TAG" "$*" >&2; exit 1; }
trap 'rc=$?; [ $rc -eq 0 ] || printf "[%s] FAILED (exit %s) at line %s: %s\n" "$SETUP_TAG" "$rc" "$LINENO" "$BASH_COMMAND" >&2' EXIT

# Quiet, non-interactive npm that never touches the project's own package.json or node_modules.
npm_q() { npm --no-audit --no-fund --no-update-notifier --loglevel=warn "$@"; }

# A folder with its own package.json, so npm does not walk up to the project's package.json.
own_package() { # dir name
  mkdir -p "$1"
  [ -f "$1/package.json" ] || printf '{ "name": "%s", "private": true }\n' "$2" >"$1/package.json"
}

# An install's stamp: the version it installed, so a rerun only checks files.
stamp_ok() { [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; }
stamp_set() { printf '%s' "$2" >"$1"; }
