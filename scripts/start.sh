#!/usr/bin/env bash
# What `make start` runs: the whole service on this machine, in the foreground. Ctrl-C stops what it started.
#   Temporal dev server  127.0.0.1:7233 (UI http://127.0.0.1:8233), state in $cache/state/temporal.db
#   Redis                $REDIS_URL (default redis://127.0.0.1:6379): used if it answers PING, else started here
#   worker, ingress (http://127.0.0.1:$PORT, default 8080; admin listener 127.0.0.1:$ADMIN_PORT, default 9465),
#   paper bridge for the demo accounts
# Installs what is missing first (npm packages, redis-server, the Temporal CLI), then builds.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

export PORT="${PORT:-8080}"
export ADMIN_PORT="${ADMIN_PORT:-9465}" # /metrics and /readyz of the ingress, on loopback
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export TEMPORAL_ADDRESS="${TEMPORAL_ADDRESS:-127.0.0.1:7233}"
export TEMPORAL_NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
TEMPORAL_UI_PORT="${TEMPORAL_UI_PORT:-8233}"
REGISTRY="demo/registry.json"
cache_root="${EXTERNAL_SIGNALS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/external-signals}"
state_dir="$cache_root/state"
run_dir="${START_RUN_DIR:-$root/.run}" # logs and the paper bridge's ledger
mkdir -p "$state_dir" "$run_dir"

log() { echo "start: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ------------------------------------------------------------------------------------------------ processes we own
set -m # every background job gets its own process group, so a stop reaches the node process behind `npm run`
names=()
pids=()
stopping=0
stop_all() {
  [ "$stopping" -eq 0 ] || return 0
  stopping=1
  set +m # no job-status chatter while stopping
  [ "${#pids[@]}" -gt 0 ] || return 0
  log "stopping ${names[*]}"
  local i pid deadline
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
  log "stopped"
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run NAME LOGFILE COMMAND...: starts COMMAND in the background in its own process group, output to LOGFILE.
run() {
  local name="$1" logfile="$2"
  shift 2
  "$@" </dev/null >>"$logfile" 2>&1 &
  names+=("$name")
  pids+=("$!")
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

# ------------------------------------------------------------------------------------------------ install and build
bash scripts/ensure-node-modules.sh
bash scripts/ensure-redis.sh >/dev/null
TEMPORAL_BIN="${TEMPORAL_BIN:-$(bash scripts/ensure-temporal.sh)}"
# The build ends by writing the workflow bundle: a source newer than it means dist/ is stale.
build_stale() {
  [ -s dist/workflow-bundle.js ] || return 0
  [ -n "$(find src workflows activities scripts bench support package.json package-lock.json tsconfig.json -type f -newer dist/workflow-bundle.js -print -quit)" ]
}
if build_stale; then
  log "building"
  npm run build >"$run_dir/build.log" 2>&1 || { tail -n 40 "$run_dir/build.log" >&2; die "npm run build failed (log: ${run_dir#"$root"/}/build.log)"; }
fi

# ------------------------------------------------------------------------------------------------ Temporal
# Our search attributes as NAME=TYPE, from their one list (src/temporal/search-attributes.ts).
mapfile -t SEARCH_ATTRIBUTES < <(node dist/scripts/search-attributes.js)
temporal_op() { "$TEMPORAL_BIN" operator "$@" --address "$TEMPORAL_ADDRESS" --command-timeout 3s; }
temporal_ready() { temporal_op namespace describe --namespace "$TEMPORAL_NAMESPACE"; }
temporal_log="$run_dir/temporal.log"
if temporal_ready >/dev/null 2>&1; then
  log "Temporal already answers at $TEMPORAL_ADDRESS; using it"
else
  temporal_host="${TEMPORAL_ADDRESS%:*}"
  temporal_port="${TEMPORAL_ADDRESS##*:}"
  case "$temporal_host" in 127.0.0.1 | localhost) ;; *) die "nothing answers at TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS and it is not local" ;; esac
  sa_flags=()
  for a in "${SEARCH_ATTRIBUTES[@]}"; do sa_flags+=(--search-attribute "$a"); done
  # The project's one dev-server profile (scripts/temporal-profile.ts; why each flag: docs/temporal-profile.md).
  mapfile -t profile_flags < <(node dist/scripts/temporal-profile.js)
  run temporal "$temporal_log" "$TEMPORAL_BIN" server start-dev --ip 127.0.0.1 --port "$temporal_port" \
    --ui-port "$TEMPORAL_UI_PORT" --db-filename "$state_dir/temporal.db" --log-level warn "${sa_flags[@]}" "${profile_flags[@]}"
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
redis_ping() { redis-cli -u "$REDIS_URL" ping 2>/dev/null | grep -q PONG; }
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
  case "$redis_host" in 127.0.0.1 | localhost) ;; *) die "nothing answers at REDIS_URL=$REDIS_URL and it is not local" ;; esac
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
  own_redis=1
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

run worker "$run_dir/worker.log" npm run --silent worker
run ingress "$run_dir/ingress.log" npm run --silent ingress
ingress_url="http://127.0.0.1:$PORT"
admin_url="http://127.0.0.1:$ADMIN_PORT"
readyz() { node -e 'fetch(process.argv[1]).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))' "$admin_url/readyz"; }
wait_until "ingress at $admin_url/readyz" 60 "${pids[-1]}" "$run_dir/ingress.log" readyz
run paper-bridge "$run_dir/paper-bridge.log" npm run --silent paper-bridge -- --registry "$REGISTRY" \
  --ledger "$run_dir/ledger.jsonl" --ingress "$ingress_url"

# ------------------------------------------------------------------------------------------------ ready
if [ "$demo_imported" -eq 0 ]; then
  log "demo credentials NOT imported: the Redis at $REDIS_URL was not started here and may hold a real registry."
  log "  If it is yours: npm run admin -- import $REGISTRY; or give the demo its own: REDIS_URL=redis://127.0.0.1:6390 make start"
fi
demo_secret="$(node -e 'console.log(require(process.argv[1]).secrets[0].secret)' "$root/$REGISTRY")"
demo_token="$(node -e 'console.log(require(process.argv[1]).tokens[0].token)' "$root/$REGISTRY")"
temporal_ui="http://127.0.0.1:$TEMPORAL_UI_PORT"
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
cat <<TXT

External Signals Service is up (demo credentials from $REGISTRY, for local use only).
  ingress      $ingress_url   (metrics and readiness: $admin_url/metrics, $admin_url/readyz)
  Temporal UI  $temporal_ui
  dashboard    $dashboard_hint
  logs         .run/{temporal,redis,worker,ingress,paper-bridge}.log, ledger .run/ledger.jsonl

Submit a buy to the demo MT5 account (the 202 carries the signalId):
  curl -s -X POST $ingress_url/webhook/custom/demo-mt5 -H 'Content-Type: application/json' -d '{"secret":"$demo_secret","action":"buy","symbol":"EURUSD","volume":0.1}'

Poll its outcome (replace SIGNAL_ID):
  curl -s -H 'Authorization: Bearer $demo_token' $ingress_url/v1/signals/SIGNAL_ID

Ctrl-C stops everything started here.
TXT

# Runs until Ctrl-C, or until one of our processes exits (then everything stops).
set +e
wait -n
status=$?
for i in "${!pids[@]}"; do
  alive "${pids[$i]}" || log "${names[$i]} exited (status $status); see its log in .run/"
done
exit "$status"
