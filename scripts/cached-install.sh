# Sourced by every script that installs a tool once into the cache outside the checkout (ensure-n8n.sh,
# ensure-schemathesis.sh, ensure-test-server.sh, go-install-cached.sh): one install at a time per tool (a second
# caller waits on the lock, then finds it), and a mark of completion made last, so a half-made install is made again.
#   cached_install NAME DIR RESULT [DONE]  prints RESULT and exits 0 when DONE exists (default DIR/.installed: a
#                                          marker; a binary moved into place whole may serve as its own mark);
#                                          else takes the lock and returns, for the caller to install into DIR
#   installed                              writes the marker (unless DONE was given) and prints RESULT
cache_root="${EXTERNAL_SIGNALS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/external-signals}"

cached_install() {
  _cached_name="$1" _cached_dir="$2" _cached_result="$3" _cached_done="${4:-$2/.installed}"
  if [ -e "$_cached_done" ]; then
    echo "$_cached_result"
    exit 0
  fi
  mkdir -p "$_cached_dir"
  exec 9>"$_cached_dir/.install.lock"
  if command -v flock >/dev/null 2>&1; then flock 9; fi
  if [ -e "$_cached_done" ]; then
    echo "$_cached_result"
    exit 0
  fi
  echo "$_cached_name: installing into $_cached_dir (once)" >&2
}

installed() {
  [ -e "$_cached_done" ] || touch "$_cached_done"
  echo "$_cached_result"
}
