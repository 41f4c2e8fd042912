# Sourced by hack/envtest.sh and hack/flux-controller.sh: the per-user cache of the tool
# binaries they build, and the progress lines of a long build.
#
# The cache lives outside the clone (every clone and worktree of this user shares it), keyed by
# tool version and platform. A build goes into a temporary folder beside its final place and is
# renamed into place only when complete, so an interrupted build, or two clones building at once,
# never leave a folder that looks complete but is not.
# shellcheck shell=bash

# OSMOPS_CACHE_DIR moves the cache (CI may point it at a folder it keeps between runs).
# internal/testing/testenv.BinaryAssetsDir computes the same folder; keep the two in step.
# shellcheck disable=SC2034 # used by the scripts that source this file
TOOLCACHE_DIR="${OSMOPS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/osmops}"
# shellcheck disable=SC2034 # used by the scripts that source this file
TOOLCACHE_PLATFORM="$(go env GOOS)-$(go env GOARCH)"
# Seconds between two "still building" lines.
TOOLCACHE_HEARTBEAT="${TOOLCACHE_HEARTBEAT:-45}"

toolcache_tmp=""
toolcache_heartbeat_pid=""

# toolcache_cleanup removes an unfinished build and stops the heartbeat, whatever ends the script.
toolcache_cleanup() {
  if [ -n "$toolcache_heartbeat_pid" ]; then
    kill "$toolcache_heartbeat_pid" 2>/dev/null || true
  fi
  if [ -n "$toolcache_tmp" ]; then
    chmod -R u+w "$toolcache_tmp" 2>/dev/null || true
    rm -rf "$toolcache_tmp"
  fi
}
trap toolcache_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# toolcache_begin DEST: prints a new temporary folder beside DEST to build into. Temporary
# folders left by builds killed outright (kill -9, power loss) are removed after a day.
toolcache_begin() {
  local parent
  parent="$(dirname "$1")"
  mkdir -p "$parent"
  find "$parent" -maxdepth 1 -name '.tmp-*' -mmin +1440 -exec rm -rf {} + 2>/dev/null || true
  mktemp -d "$parent/.tmp-$(basename "$1").XXXXXX"
}

# toolcache_publish TMP DEST: renames the complete TMP to DEST. If another build got there
# first, its result is kept and TMP dropped. An incomplete DEST (from an older script, or
# damaged by hand) is replaced.
toolcache_publish() {
  local tmp="$1" dest="$2"
  if [ -e "$dest" ] && [ -n "${3:-}" ] && ! "$3" "$dest"; then
    rm -rf "$dest"
  fi
  # GNU mv -T is one rename(2), and fails rather than nesting when DEST already exists.
  if mv -T "$tmp" "$dest" 2>/dev/null || { [ ! -e "$dest" ] && mv "$tmp" "$dest"; }; then
    return 0
  fi
  rm -rf "$tmp"
}

# toolcache_start DEST CHECK PRINTED [LEGACY]: when DEST passes the function CHECK, prints
# PRINTED and ends the script. Else it sets toolcache_tmp to a new folder to build into, and
# when LEGACY (the bin/ folder of a clone from before the per-user cache) passes CHECK, takes
# the tool from there instead of building it again.
toolcache_start() {
  local dest="$1" check="$2" printed="$3" legacy="${4:-}"
  if "$check" "$dest"; then
    echo "$printed"
    exit 0
  fi
  toolcache_tmp="$(toolcache_begin "$dest")"
  if [ -n "$legacy" ] && "$check" "$legacy"; then
    echo "$TOOLCACHE_LOG_PREFIX: copying $legacy into the cache $dest (the old folder may then be deleted)" >&2
    cp -R "$legacy"/* "$toolcache_tmp/"
    toolcache_finish "$dest" "$check" "$printed"
  fi
}

# toolcache_finish DEST CHECK PRINTED: publishes the build of toolcache_begin as DEST, checks
# it with the function CHECK (called with DEST), prints PRINTED and ends the script.
toolcache_finish() {
  toolcache_publish "$toolcache_tmp" "$1" "$2"
  toolcache_tmp=""
  "$2" "$1" || { echo "$TOOLCACHE_LOG_PREFIX: files missing in $1 after the build" >&2; exit 1; }
  echo "$3"
  exit 0
}

# toolcache_run LOG WHAT CMD...: runs CMD with its output in LOG (go's hundreds of
# "go: downloading" lines help nobody), printing a line every TOOLCACHE_HEARTBEAT seconds so
# that a long build is never silent. On failure it prints the end of LOG.
toolcache_run() {
  local logfile="$1" what="$2" start=$SECONDS status=0
  shift 2
  (
    next=$TOOLCACHE_HEARTBEAT
    # Stops by itself within 5 seconds should the script die without its EXIT trap.
    while kill -0 $$ 2>/dev/null; do
      sleep 5
      if [ $((SECONDS - start)) -ge "$next" ]; then
        echo "$TOOLCACHE_LOG_PREFIX: still building $what, $(toolcache_elapsed "$start") elapsed$(toolcache_busy)" >&2
        next=$((next + TOOLCACHE_HEARTBEAT))
      fi
    done
  ) </dev/null >&2 &
  toolcache_heartbeat_pid=$!
  "$@" >>"$logfile" 2>&1 || status=$?
  kill "$toolcache_heartbeat_pid" 2>/dev/null || true
  wait "$toolcache_heartbeat_pid" 2>/dev/null || true
  toolcache_heartbeat_pid=""
  if [ "$status" -ne 0 ]; then
    echo "$TOOLCACHE_LOG_PREFIX: building $what failed; the end of its log ($logfile):" >&2
    tail -n 40 "$logfile" >&2
    return "$status"
  fi
}

# toolcache_busy: why a build takes longer than the idle-machine estimates printed before it,
# when the machine runs more than it has cores (Linux's load average); nothing otherwise.
toolcache_busy() {
  local load cores
  load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null) || return 0
  cores=$(nproc 2>/dev/null || echo 1)
  awk -v load="$load" -v cores="$cores" 'BEGIN { if (load + 0 >= cores + 0)
    printf "; the machine is busy (load average %s on %d cores): longer than the estimate for idle cores", load, cores }'
}

# toolcache_elapsed START: the time since START (a value of $SECONDS), as "1m05s".
toolcache_elapsed() {
  local s=$((SECONDS - $1))
  printf '%dm%02ds' $((s / 60)) $((s % 60))
}

# toolcache_goversion: the "go" line for a throw-away module, the toolchain's own version.
toolcache_goversion() {
  go env GOVERSION | sed 's/^go\([0-9]*\.[0-9]*\).*/\1/'
}
