#!/bin/bash
# hookTimer.sh <log> <command>: runs one hook command exactly as the agent would (sh -c, the same stdin), passes its
# stdout, stderr and exit code through, and appends one JSON line to <log>: the event, start and end (epoch µs),
# exit code, the bytes the command read on stdin (0: the agent sent no event) and printed on stdout (a hook's stdout
# reaches the agent). With AVH_HOOK_GIT_TRACE set, every git process the command starts writes trace2 perf lines to
# <log>.git/<start>.
log="$1"
shift
input=$(mktemp)
out=$(mktemp)
cat >"$input"
event=$(sed -n 's/.*"hook_event_name" *: *"\([A-Za-z]*\)".*/\1/p' "$input" | head -n 1)
start=${EPOCHREALTIME/./}
if [ -n "${AVH_HOOK_GIT_TRACE:-}" ]; then
  mkdir -p "$log.git"
  GIT_TRACE2_PERF="$log.git/$start-$event" sh -c "$1" <"$input" >"$out"
else
  sh -c "$1" <"$input" >"$out"
fi
code=$?
end=${EPOCHREALTIME/./}
bytes=$(wc -c <"$out")
inBytes=$(wc -c <"$input")
printf '{"event":"%s","startUs":%s,"endUs":%s,"code":%s,"stdinBytes":%s,"stdoutBytes":%s}\n' "$event" "$start" "$end" \
  "$code" "$inBytes" "$bytes" >>"$log"
cat "$out"
rm -f "$input" "$out"
exit $code
