#!/usr/bin/env bash
# Experiments behind FINDINGS-blame.md: plain git blame vs blame with a graft (-S) file on our commit shapes.
set -eu
W=$(mktemp -d); cd "$W"; git init -q -b main r; cd r
git config user.name U; git config user.email u@x; git config commit.gpgsign false
seq 1 6 > f; git add f; git commit -qm H0; H=$(git rev-parse HEAD)
snap() { cp .git/index "$W/idx"; GIT_INDEX_FILE="$W/idx" git add -A; echo "$1" | git commit-tree "$(GIT_INDEX_FILE="$W/idx" git write-tree)" -p "$2"; }
sed -i 's/^2$/U2/' f                       # the user's uncommitted edit before the turn
B=$(snap "base snapshot" "$H")             # beginTurn: base snapshot, parent HEAD
sed -i 's/^5$/A5/' f; git commit -qam "[Agent] change 5"; A=$(git rev-parse HEAD)
echo "## 1. [Agent] over a dirty tree: plain blame credits the user's U2 to the agent"; git blame -s f
echo "$A $B" > "$W/revs"
echo "## 1'. with -S (A's parent is its base snapshot B)"; git blame -s -S "$W/revs" f
sed -i 's/^1$/C1/' f; git commit -qam "user c1"; C=$(git rev-parse HEAD)
R=$(echo "[Restore] Restored version ${B:0:7}" | git commit-tree "$B^{tree}" -p "$C"); git reset -q --hard "$R"
echo "## 2. Undo (restore to B): plain blame credits the restore with old lines 1 and 5"; git blame -s f
echo "## 2a. --ignore-rev R instead (heuristic)"; git blame -s --ignore-rev "$R" f
echo "$R $B" >> "$W/revs"; echo "## 2'. with -S (R -> B)"; git blame -s -S "$W/revs" f
R2=$(echo "[Restore] Restored version ${C:0:7}" | git commit-tree "$C^{tree}" -p "$R"); git reset -q --hard "$R2"
echo "## 3. Redo (restore to C): plain blame credits the redo with A5 and C1"; git blame -s f
echo "$R2 $C" >> "$W/revs"; echo "## 3'. with -S (R2 -> C)"; git blame -s -S "$W/revs" f
sed -i 's/^A5$/5/' f; git commit -qam '[Revert] Undid turn "change 5"'; V=$(git rev-parse HEAD)
echo "## 4. Undo Only This Turn: plain blame credits the revert with the restored 5"; git blame -s f
echo "$V $R2 $B" >> "$W/revs"; echo "## 4'. with -S (V -> V^ + B)"; git blame -s -S "$W/revs" f
sed -i 's/^3$/D3/' f; B2=$(snap "base snapshot 2" "$V"); sed -i 's/^6$/T6/' f
echo "## 5. running turn over a dirty tree, --contents: both D3 (user, before) and T6 (turn) are 'Not Committed Yet'"; git blame -s -S "$W/revs" --contents f -- f
echo "## 5a. --contents with a rev (2.39)"; git blame -s --contents f "$B2" -- f 2>&1 || true
P="$W/gitdir"; mkdir "$P"; echo "$B2" > "$P/HEAD"; (cd .git && pwd) > "$P/commondir"
echo "## 5'. private git dir whose HEAD is the base snapshot B2 (commondir -> the repository)"; GIT_DIR="$P" GIT_WORK_TREE="$PWD" git blame -s -S "$W/revs" --contents - -- f < f
echo "## 6. a file only in the working tree"; echo hi > newf; git blame -s newf 2>&1 || true
echo "A=$A B=$B C=$C R=$R R2=$R2 V=$V B2=$B2"; rm -rf "$W"
