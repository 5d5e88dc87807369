#!/bin/sh
# A hook that records what the agent sent it, for the agent tests: stdin (the event's JSON), argv, the environment and
# the time it started, as $AVH_CAPTURE_DIR/<ns>-<pid>.{stdin,env,argv}. Plain sh and coreutils, so it adds a few
# milliseconds per event, not a Node start. When $AVH_CAPTURE_REPLY_<Event> is set it prints that on stdout (the
# hook's output channel: context for the model, or a JSON answer).
t=$(date +%s%N)
d="${AVH_CAPTURE_DIR:?AVH_CAPTURE_DIR is not set}"
f="$d/$t-$$"
cat >"$f.stdin.tmp"
env >"$f.env"
printf '%s\n' "$0" "$@" >"$f.argv"
mv "$f.stdin.tmp" "$f.stdin"
event=$(sed -n 's/.*"hook_event_name" *: *"\([A-Za-z]*\)".*/\1/p' "$f.stdin" | head -n 1)
eval "reply=\${AVH_CAPTURE_REPLY_${event:-none}:-}"
[ -n "$reply" ] && printf '%s' "$reply"
exit 0
