# Sourced by the ensure-*.sh scripts that install a tool once into the cache outside the checkout: one install at a
# time per tool (a second caller waits on the lock, then finds it), and a marker written last, so a half-made install
# is made again. After `cached_install NAME DIR RESULT`, the caller installs into DIR, then calls `installed`.
#   cached_install NAME DIR RESULT  prints RESULT and exits 0 when DIR holds a finished install; else takes the lock
#   installed                       writes the marker and prints RESULT
cache_root="${EXTERNAL_SIGNALS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/external-signals}"

cached_install() {
  _cached_name="$1" _cached_dir="$2" _cached_result="$3"
  if [ -f "$_cached_dir/.installed" ]; then
    echo "$_cached_result"
    exit 0
  fi
  mkdir -p "$_cached_dir"
  exec 9>"$_cached_dir/.install.lock"
  if command -v flock >/dev/null 2>&1; then flock 9; fi
  if [ -f "$_cached_dir/.installed" ]; then
    echo "$_cached_result"
    exit 0
  fi
  echo "ensure-$_cached_name: installing into $_cached_dir (once)" >&2
}

installed() {
  touch "$_cached_dir/.installed"
  echo "$_cached_result"
}
