#!/usr/bin/env bash
# What `make start` runs: the whole service on this machine, in the foreground. Ctrl-C stops what it started.
#   Temporal dev server  $TEMPORAL_ADDRESS (default 127.0.0.1:7233; UI on $TEMPORAL_UI_PORT, default its port + 1000):
#                        used if it answers, else started here, state in $cache/state/temporal[-PORT].db
#   Redis                $REDIS_URL (default redis://127.0.0.1:6379): used if it answers PING, else started here
#   worker               its /metrics on $WORKER_METRICS_PORT (default 9464)
#   ingress              http://127.0.0.1:$PORT (default 8080); admin listener (/metrics, /readyz) on $ADMIN_PORT (9465)
#   paper bridge         for the demo accounts
# Every port it will listen on is checked before anything starts; a clash names the port and the variable to change.
# The banner comes once every process is up and healthy. Any stop (TERM, INT, HUP, once or repeatedly, to the script or
# to its process group) stops everything started here and nothing else: a Redis or Temporal found running is left alone.
# Installs what is missing first (npm packages, redis-server, the Temporal CLI), then builds if dist/ is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

export PORT="${PORT:-8080}"
export ADMIN_PORT="${ADMIN_PORT:-9465}" # /metrics and /readyz of the ingress, on loopback
export WORKER_METRICS_PORT="${WORKER_METRICS_PORT:-9464}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export TEMPORAL_ADDRESS="${TEMPORAL_ADDRESS:-127.0.0.1:7233}"
export TEMPORAL_NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
temporal_host="${TEMPORAL_ADDRESS%:*}"
temporal_port="${TEMPORAL_ADDRESS##*:}"
TEMPORAL_UI_PORT="${TEMPORAL_UI_PORT:-$((${temporal_port//[!0-9]/0} + 1000))}" # the dev server's own default
REGISTRY="demo/registry.json"
cache_root="${EXTERNAL_SIGNALS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/external-signals}"
state_dir="$cache_root/state"
run_dir="${START_RUN_DIR:-$root/.run}" # logs and the paper bridge's ledger
mkdir -p "$state_dir" "$run_dir"
rel() { echo "${1#"$root"/}"; }

log() { echo "start: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ------------------------------------------------------------------------------------------------ processes we own
set -m # every background job gets its own process group, so a stop reaches the node process behind `npm run`
names=()
pids=()
stopping=0
stop_all() {
  stopping=1
  set +m # no job-status chatter while stopping
  local i pid deadline
  [ "${#pids[@]}" -eq 0 ] || log "stopping ${names[*]}"
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do # reverse start order: bridge, ingress, worker, redis, temporal
    pid="${pids[$i]}"
    kill -TERM -- "-$pid" 2>/dev/null || continue
    deadline=$((SECONDS + 15))
    while kill -0 -- "-$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    if kill -0 -- "-$pid" 2>/dev/null; then
      log "${names[$i]} did not stop within 15 s; killing it"
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
  done
  # A job a signal caught between its start and its entry in pids: still ours, still stopped.
  for pid in $(jobs -p); do kill -KILL -- "-$pid" 2>/dev/null || true; done
  [ "${#pids[@]}" -eq 0 ] || log "stopped"
}
# A signal ends the script (the EXIT trap then stops what it started). A signal that comes while it stops is ignored:
# GNU make passes a TERM on to us, so one TERM to the process group arrives twice, and an `exit` from a second trap
# would cut the stop short and leave the stack running without us.
on_signal() {
  if [ "$stopping" -eq 1 ]; then
    log "$1 while stopping: still stopping"
    return 0
  fi
  stopping=1
  exit "$2"
}
trap stop_all EXIT
# Ctrl-C (INT) and TERM are how it is meant to stop: a clean stop exits 0, so make reports no "Error 130/143".
trap 'on_signal INT 0' INT
trap 'on_signal TERM 0' TERM
trap 'on_signal HUP 129' HUP

# run NAME LOGFILE COMMAND...: starts COMMAND in the background in its own process group, output to LOGFILE. The
# command is kept (quoted) so that supervision below can start it again.
declare -A command_of log_of
run() {
  local name="$1" logfile="$2"
  shift 2
  "$@" </dev/null >>"$logfile" 2>&1 &
  names+=("$name")
  pids+=("$!")
  command_of[$name]="$(printf '%q ' "$@")"
  log_of[$name]="$logfile"
  log "$name started (pid $!), log: ${logfile#"$root"/}"
}

alive() { kill -0 -- "-$1" 2>/dev/null; }

# wait_until WHAT SECONDS PID COMMAND...: polls COMMAND until it succeeds; fails if PID's group dies or time runs out.
wait_until() {
  local what="$1" timeout="$2" pid="$3" logfile="$4"
  shift 4
  local deadline=$((SECONDS + timeout))
  until "$@" >/dev/null 2>&1; do
    if [ -n "$pid" ] && ! alive "$pid"; then
      tail -n 30 "$logfile" >&2 || true
      die "$what: the process exited (log above, ${logfile#"$root"/})"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      [ -z "$logfile" ] || tail -n 30 "$logfile" >&2 || true
      die "$what: not ready after ${timeout}s"
    fi
    sleep 0.2
  done
}

# ------------------------------------------------------------------------------------------------ install
# Node 24 from scripts/ensure-node.sh (the machine's when it has it, else from the npm registry) first on PATH.
PATH="$(bash scripts/ensure-node.sh):$PATH" || die "scripts/ensure-node.sh failed"
export PATH
bash scripts/ensure-node-modules.sh
bash scripts/ensure-redis.sh >/dev/null
TEMPORAL_BIN="${TEMPORAL_BIN:-$(bash scripts/ensure-temporal.sh)}"

# ------------------------------------------------------------------------------------------------ ports, before anything starts
# shellcheck source=scripts/start-checks.sh
source scripts/start-checks.sh
temporal_op() { "$TEMPORAL_BIN" operator "$@" --address "$TEMPORAL_ADDRESS" --command-timeout 3s; }
temporal_ready() { temporal_op namespace describe --namespace "$TEMPORAL_NAMESPACE"; }
# A bounded ping: redis-cli waits for ever on a port where something that is not Redis listens.
redis_ping() { timeout 5 redis-cli -u "$REDIS_URL" ping 2>/dev/null | grep -q PONG; }
is_local() { case "$1" in 127.0.0.1 | localhost) return 0 ;; *) return 1 ;; esac; }

own_temporal=0
if temporal_ready >/dev/null 2>&1; then
  log "Temporal already answers at $TEMPORAL_ADDRESS; using it (it will not be stopped)"
else
  is_local "$temporal_host" || die "nothing answers at TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS and it is not local"
  own_temporal=1
  want_port "Temporal" TEMPORAL_ADDRESS 127.0.0.1 "$temporal_port" 'TEMPORAL_ADDRESS=127.0.0.1:%s'
  want_port "the Temporal UI" TEMPORAL_UI_PORT 127.0.0.1 "$TEMPORAL_UI_PORT" 'TEMPORAL_UI_PORT=%s'
fi
own_redis=0
if redis_ping; then
  log "Redis already answers at $REDIS_URL; using it (it will not be stopped, and no demo credentials go into it)"
else
  hostport="${REDIS_URL#redis://}"
  hostport="${hostport#*@}"
  hostport="${hostport%%/*}"
  redis_host="${hostport%:*}"
  redis_port="${hostport##*:}"
  [ "$redis_port" != "$hostport" ] || redis_port=6379
  is_local "$redis_host" || die "nothing answers at REDIS_URL=$REDIS_URL and it is not local"
  own_redis=1
  want_port "Redis" REDIS_URL 127.0.0.1 "$redis_port" 'REDIS_URL=redis://127.0.0.1:%s'
fi
[ "$WORKER_METRICS_PORT" = off ] || want_port "the worker's /metrics" WORKER_METRICS_PORT "${HOST:-127.0.0.1}" "$WORKER_METRICS_PORT" 'WORKER_METRICS_PORT=%s'
want_port "the ingress" PORT "${HOST:-127.0.0.1}" "$PORT" 'PORT=%s'
[ "$ADMIN_PORT" = off ] || want_port "the ingress's admin listener" ADMIN_PORT "${ADMIN_HOST:-127.0.0.1}" "$ADMIN_PORT" 'ADMIN_PORT=%s'
found=""
[ "$own_temporal" -eq 1 ] && [ "$own_redis" -eq 1 ] ||
  found="A Temporal or Redis found running is used: if it is another make start's, give this one its own ports too (PORT, ADMIN_PORT, WORKER_METRICS_PORT, TEMPORAL_ADDRESS, TEMPORAL_UI_PORT, REDIS_URL)."
check_ports "$found" || exit 1

# ------------------------------------------------------------------------------------------------ build
# The build ends by writing the workflow bundle: a source newer than it means dist/ is stale.
build_stale() {
  [ -s dist/workflow-bundle.js ] || return 0
  [ -n "$(find src workflows activities scripts bench support package.json package-lock.json tsconfig.json -type f -newer dist/workflow-bundle.js -print -quit)" ]
}
if build_stale; then
  log "building"
  npm run build >"$run_dir/build.log" 2>&1 || { tail -n 40 "$run_dir/build.log" >&2; die "npm run build failed (log: $(rel "$run_dir")/build.log)"; }
fi
# The MT5 bridge package the account page hands out (`make dist`, docs/mt5-bridge.md), into dist/mt5-bridge/; made again
# when it is missing or older than the bridge's sources.
if [ ! -s dist/mt5-bridge/manifest.json ] ||
  [ -n "$(find bridges/mt5/src bridges/mt5/package bridges/mt5/pyproject.toml scripts/dist.sh scripts/dist-mt5.ts -type f -newer dist/mt5-bridge/manifest.json -print -quit)" ]; then
  log "packaging the MT5 bridge"
  PYTHON="$(bash scripts/ensure-python.sh)" SKIP_BUILD=1 bash scripts/dist.sh >>"$run_dir/build.log" 2>&1 \
    || { tail -n 20 "$run_dir/build.log" >&2; die "make dist (the MT5 bridge package) failed (log: $(rel "$run_dir")/build.log)"; }
fi

# ------------------------------------------------------------------------------------------------ Temporal
# Our search attributes as NAME=TYPE, from their one list (src/temporal/search-attributes.ts).
mapfile -t SEARCH_ATTRIBUTES < <(node dist/scripts/search-attributes.js)
temporal_log="$run_dir/temporal.log"
if [ "$own_temporal" -eq 1 ]; then
  sa_flags=()
  for a in "${SEARCH_ATTRIBUTES[@]}"; do sa_flags+=(--search-attribute "$a"); done
  # One database file per port: two stacks on one machine never share one.
  temporal_db="$state_dir/temporal.db"
  [ "$temporal_port" = 7233 ] || temporal_db="$state_dir/temporal-$temporal_port.db"
  # The project's one dev-server profile (scripts/temporal-profile.ts; why each flag: docs/temporal-profile.md).
  mapfile -t profile_flags < <(node dist/scripts/temporal-profile.js)
  run temporal "$temporal_log" "$TEMPORAL_BIN" server start-dev --ip 127.0.0.1 --port "$temporal_port" \
    --ui-port "$TEMPORAL_UI_PORT" --db-filename "$temporal_db" --log-level warn "${sa_flags[@]}" "${profile_flags[@]}"
  wait_until "Temporal at $TEMPORAL_ADDRESS" 60 "${pids[-1]}" "$temporal_log" temporal_ready
fi
# The dev server registers search attributes only into a new database; add any an older state file lacks.
listed="$(temporal_op search-attribute list --namespace "$TEMPORAL_NAMESPACE")"
for a in "${SEARCH_ATTRIBUTES[@]}"; do
  if ! grep -qw "${a%%=*}" <<<"$listed"; then
    log "registering search attribute ${a%%=*}"
    temporal_op search-attribute create --namespace "$TEMPORAL_NAMESPACE" --name "${a%%=*}" --type "${a#*=}" >&2
  fi
done

# ------------------------------------------------------------------------------------------------ Redis
# Redis we start keeps an append-only file (appendfsync everysec; docs/deployment.md says what a crash or a power loss
# can lose): a restart keeps the registry, the queued commands and the sequence numbers.
if [ "$own_redis" -eq 1 ]; then
  redis_args=(--port "$redis_port" --bind 127.0.0.1 --daemonize no --dir "$state_dir" --save ""
    --appendfsync everysec --appenddirname "redis-$redis_port-aof" --dbfilename "redis-$redis_port.rdb")
  # Redis turned to AOF ignores an older snapshot: load a snapshot of an earlier version of this script once, then
  # switch AOF on while running (Redis writes the AOF from the data it holds).
  from_snapshot=0
  [ -d "$state_dir/redis-$redis_port-aof" ] || [ ! -s "$state_dir/redis-$redis_port.rdb" ] || from_snapshot=1
  run redis "$run_dir/redis.log" redis-server "${redis_args[@]}" --appendonly "$([ "$from_snapshot" -eq 1 ] && echo no || echo yes)"
  wait_until "Redis at $REDIS_URL" 20 "${pids[-1]}" "$run_dir/redis.log" redis_ping
  if [ "$from_snapshot" -eq 1 ]; then
    log "moving Redis from its snapshot to an append-only file"
    redis-cli -u "$REDIS_URL" config set appendonly yes >/dev/null
    aof_written() {
      local info
      info="$(redis-cli -u "$REDIS_URL" info persistence | tr -d '\r')"
      grep -qx 'aof_rewrite_in_progress:0' <<<"$info" && grep -qx 'aof_rewrite_scheduled:0' <<<"$info" &&
        grep -qx 'aof_last_bgrewrite_status:ok' <<<"$info"
    }
    wait_until "Redis to write its append-only file" 60 "${pids[-1]}" "$run_dir/redis.log" aof_written
  fi
fi

# ------------------------------------------------------------------------------------------------ the service
# Demo credentials only go into a Redis started here, and only while it holds no account (its first start): a Redis
# found running may be somebody's real registry, and edits made with the admin CLI survive a restart.
demo_imported=0
if [ "$own_redis" -eq 1 ]; then
  if [ "$(npm run --silent admin -- account list --json | tr -d '[:space:]')" = "[]" ]; then
    log "importing $REGISTRY"
    npm run --silent admin -- import "$REGISTRY" >&2
  else
    log "Redis at $REDIS_URL already holds a registry; not importing $REGISTRY again"
  fi
  demo_imported=1
fi

# The dashboard's and the callbacks' sealing keys: made once, kept with the state (a new key would make every TOTP
# seed and callback secret sealed under the old one unreadable). Plain HTTP here, so the cookies are not Secure.
for key_file in "$state_dir/owner-secrets.key" "$state_dir/callback-secret.key"; do
  [ -s "$key_file" ] || (umask 077 && node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("base64"))' >"$key_file")
done
export OWNER_SECRETS_KEY_FILE="$state_dir/owner-secrets.key"
export CALLBACK_SECRET_KEY_FILE="$state_dir/callback-secret.key"
export DASHBOARD_SECURE_COOKIES=false
export PUBLIC_URL="${PUBLIC_URL:-http://127.0.0.1:$PORT}"

# What each log held before its process started: health is read from what the process writes after that.
worker_log="$run_dir/worker.log"
bridge_log="$run_dir/paper-bridge.log"
bridge_offset=0
[ ! -f "$bridge_log" ] || bridge_offset="$(stat -c %s "$bridge_log")"
run worker "$worker_log" npm run --silent worker
worker_pid="${pids[-1]}"
run ingress "$run_dir/ingress.log" npm run --silent ingress
ingress_url="http://127.0.0.1:$PORT"
admin_url="http://127.0.0.1:$ADMIN_PORT"
ready_url="$admin_url/readyz"
[ "$ADMIN_PORT" != off ] || ready_url="$ingress_url/healthz"
http_ok() { node -e 'fetch(process.argv[1]).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))' "$1"; }
wait_until "ingress at $ready_url" 60 "${pids[-1]}" "$run_dir/ingress.log" http_ok "$ready_url"
wait_until "worker polling task queue ${TEMPORAL_TASK_QUEUE:-external-signals} at $TEMPORAL_ADDRESS" 90 "$worker_pid" "$worker_log" worker_polling "$worker_pid"
run paper-bridge "$bridge_log" npm run --silent paper-bridge -- --registry "$REGISTRY" \
  --ledger "$run_dir/ledger.jsonl" --ingress "$ingress_url"
wait_until "paper bridge's first call for each demo account" 30 "${pids[-1]}" "$bridge_log" bridge_answered "$bridge_log" "$bridge_offset"
bridge_refused="$(bridge_answered "$bridge_log" "$bridge_offset" || true)"
for i in "${!pids[@]}"; do
  alive "${pids[$i]}" || die "${names[$i]} exited while the others started; see $(rel "$run_dir")/${names[$i]}.log"
done

# ------------------------------------------------------------------------------------------------ ready
if [ "$demo_imported" -eq 0 ]; then
  log "demo credentials NOT imported: the Redis at $REDIS_URL was not started here and may hold a real registry."
  log "  If it is yours: npm run admin -- import $REGISTRY; or give the demo its own: REDIS_URL=redis://127.0.0.1:6390 make start"
fi
if [ -n "$bridge_refused" ]; then
  log "the paper bridge could not connect (see $(rel "$bridge_log")):"
  while read -r line; do log "  $line"; done <<<"$bridge_refused"
fi
demo_secret="$(node -e 'console.log(require(process.argv[1]).secrets[0].secret)' "$root/$REGISTRY")"
demo_token="$(node -e 'console.log(require(process.argv[1]).tokens[0].token)' "$root/$REGISTRY")"
temporal_line="$TEMPORAL_ADDRESS, UI http://127.0.0.1:$TEMPORAL_UI_PORT  (TEMPORAL_ADDRESS, TEMPORAL_UI_PORT)"
[ "$own_temporal" -eq 1 ] || temporal_line="$TEMPORAL_ADDRESS  (found running: used, not started here, not stopped)"
redis_line="$REDIS_URL  (REDIS_URL)"
[ "$own_redis" -eq 1 ] || redis_line="$REDIS_URL  (found running: used, not started here, not stopped)"
worker_line="http://${HOST:-127.0.0.1}:$WORKER_METRICS_PORT/metrics  (WORKER_METRICS_PORT)"
[ "$WORKER_METRICS_PORT" != off ] || worker_line="no /metrics (WORKER_METRICS_PORT=off)"
admin_line="$admin_url/metrics, $admin_url/readyz  (ADMIN_PORT)"
[ "$ADMIN_PORT" != off ] || admin_line="none (ADMIN_PORT=off)"
# The demo owner's dashboard: a setup link until they have set a password and TOTP, then the sign-in page.
demo_owner="$(node -e 'console.log(require(process.argv[1]).accounts[0].owner)' "$root/$REGISTRY")"
dashboard_hint="sign in at $ingress_url/dashboard/sign-in as $demo_owner"
if [ "$demo_imported" -eq 1 ]; then
  owner_status="$(npm run --silent admin -- owner list --json | node -e 'let t="";process.stdin.on("data",(c)=>(t+=c)).on("end",()=>{const o=JSON.parse(t).find((x)=>x.owner===process.argv[1]||x.id===process.argv[1]);console.log(o?o.status:"none")})' "$demo_owner")"
  if [ "$owner_status" != "active" ]; then
    setup_link="$(npm run --silent admin -- owner create "$demo_owner" --json | node -e 'let t="";process.stdin.on("data",(c)=>(t+=c)).on("end",()=>console.log(JSON.parse(t).setupLink))')"
    dashboard_hint="open this one-time setup link as the demo owner ($demo_owner), set a password and scan the TOTP code:
                 $setup_link"
  fi
fi
logs="$(rel "$run_dir")"
cat <<TXT

External Signals Service is up (demo credentials from $REGISTRY, for local use only).
  ingress        $ingress_url  (PORT)
  admin          $admin_line
  worker         $worker_line
  Temporal       $temporal_line
  Redis          $redis_line
  dashboard      $dashboard_hint
  logs           $logs/{temporal,redis,worker,ingress,paper-bridge}.log, ledger $logs/ledger.jsonl

Submit a buy to the demo MT5 account (the 202 carries the signalId):
  curl -s -X POST $ingress_url/webhook/custom/demo-mt5 -H 'Content-Type: application/json' -d '{"secret":"$demo_secret","action":"buy","symbol":"EURUSD","volume":0.1}'

Poll its outcome (replace SIGNAL_ID):
  curl -s -H 'Authorization: Bearer $demo_token' $ingress_url/v1/signals/SIGNAL_ID

Ctrl-C stops everything started here.
TXT

# ------------------------------------------------------------------------------------------------ supervision
# Runs until Ctrl-C. A worker, ingress or paper bridge that exits (a crash, a kill -9) is started again after a pause
# that doubles each time, at most RESTARTS_MAX times per process in the stack's life, and must pass the same health
# check as at start; past that bound, or when Temporal or Redis exits (their state is everyone's), everything stops.
RESTARTS_MAX=5
RESTART_PAUSE_FIRST_S=1
declare -A restarts
ready_again() {
  local name="$1" pid="$2"
  case "$name" in
    worker) wait_until "worker polling task queue ${TEMPORAL_TASK_QUEUE:-external-signals} again" 90 "$pid" "${log_of[$name]}" worker_polling "$pid" ;;
    ingress) wait_until "ingress at $ready_url again" 60 "$pid" "${log_of[$name]}" http_ok "$ready_url" ;;
    paper-bridge) wait_until "paper bridge's first call again" 30 "$pid" "${log_of[$name]}" bridge_answered "${log_of[$name]}" "$3" ;;
  esac
}
set +e
while :; do
  wait -n
  status=$?
  for i in "${!pids[@]}"; do
    alive "${pids[$i]}" && continue
    name="${names[$i]}"
    n="${restarts[$name]:-0}"
    case "$name" in worker | ingress | paper-bridge) ;; *) n="$RESTARTS_MAX" ;; esac
    if [ "$n" -ge "$RESTARTS_MAX" ]; then
      log "$name exited (status $status); see its log in $logs/. Stopping everything."
      exit "$status"
    fi
    restarts[$name]=$((n + 1))
    pause=$((RESTART_PAUSE_FIRST_S << n))
    log "$name exited (status $status); starting it again in ${pause}s (restart $((n + 1)) of $RESTARTS_MAX), log: $logs/${name}.log"
    sleep "$pause" # a backoff between restarts, not a wait for a condition
    offset="$(stat -c %s "${log_of[$name]}")"
    eval "${command_of[$name]}" </dev/null >>"${log_of[$name]}" 2>&1 &
    pids[$i]="$!"
    ready_again "$name" "${pids[$i]}" "$offset"
    log "$name is back (pid ${pids[$i]})"
  done
done
