# The cluster's processes by name, sourced by up.sh and down.sh. A pid file holds the pid and the
# process's start time (clock ticks since boot, /proc/PID/stat field 22): after a session ends or
# the machine restarts, a recorded pid may belong to another process, or to a zombie nobody reaped,
# and `kill -0` alone would take it for the cluster's (up.sh then skipped starting it and waited
# for a containerd that was never started; down.sh would have signalled a stranger).
# Needs STATE.

start_time_of() { # pid -> start time of a live (not zombie) process, or fails
  local stat rest
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  rest=${stat##*) } # the command name may hold spaces or parentheses: fields after its last ')'
  set -- $rest
  [ "$1" != Z ] || return 1
  printf '%s\n' "${20}"
}

record_pid() { # name pid
  printf '%s %s\n' "$2" "$(start_time_of "$2")" >"$STATE/run/$1.pid"
}

live_pid() { # name -> the recorded pid while that very process runs, or fails
  local pidfile=$STATE/run/$1.pid pid started now
  [ -f "$pidfile" ] || return 1
  read -r pid started <"$pidfile" || return 1
  [ -n "${started:-}" ] || return 1
  now=$(start_time_of "$pid") || return 1
  [ "$now" = "$started" ] && printf '%s\n' "$pid"
}
