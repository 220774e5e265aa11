# Sourced by scripts/start.sh: the ports `make start` will listen on, checked before anything starts, and the probes
# that say a process it started is healthy. Uses log() from start.sh.

# ------------------------------------------------------------------------------------------------ ports
port_what=()
port_var=()
port_host=()
port_num=()
port_example=()

# want_port WHAT VARIABLE HOST PORT EXAMPLE: the stack will listen on HOST:PORT, set by VARIABLE; EXAMPLE is a printf
# format of the setting that moves it, given another port.
want_port() {
  port_what+=("$1")
  port_var+=("$2")
  port_host+=("$3")
  port_num+=("$4")
  port_example+=("$5")
}

# unbindable HOST:PORT...: for each that cannot be listened on now, its index in the arguments and the error code.
unbindable() {
  node -e '
    const net = require("net");
    const wanted = process.argv.slice(1);
    (async () => {
      for (const [i, hp] of wanted.entries()) {
        const at = hp.lastIndexOf(":");
        const code = await new Promise((resolve) => {
          const server = net.createServer();
          server.once("error", (err) => resolve(err.code || String(err)));
          server.listen({ host: hp.slice(0, at), port: Number(hp.slice(at + 1)), exclusive: true }, () => server.close(() => resolve(null)));
        });
        if (code) console.log(`${i} ${code}`);
      }
    })();' "$@"
}

# check_ports [HINT]: every port wanted is a number, wanted once, and free; else says which, and which variable moves it, then HINT.
check_ports() {
  local problems=() i j n alt
  for i in "${!port_num[@]}"; do
    n="${port_num[$i]}"
    if ! [[ "$n" =~ ^[0-9]{1,5}$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 65535 ]; then
      problems+=("${port_var[$i]}: \"$n\" is not a port (1 to 65535) for ${port_what[$i]}")
      continue
    fi
    for ((j = 0; j < i; j++)); do
      if [ "${port_num[$j]}" = "$n" ]; then
        problems+=("port $n is set for both ${port_what[$j]} (${port_var[$j]}) and ${port_what[$i]} (${port_var[$i]}): give each its own")
      fi
    done
  done
  if [ "${#problems[@]}" -eq 0 ]; then
    local addresses=() busy idx code
    for i in "${!port_num[@]}"; do addresses+=("${port_host[$i]}:${port_num[$i]}"); done
    busy="$(unbindable "${addresses[@]}")"
    while read -r idx code; do
      [ -n "$idx" ] || continue
      n="${port_num[$idx]}"
      alt=$((n < 55535 ? n + 10000 : n - 10000))
      # shellcheck disable=SC2059 # the example is a format by design
      local what="is in use on ${port_host[$idx]}"
      [ "$code" = EADDRINUSE ] || what="cannot be listened on at ${port_host[$idx]} ($code)"
      problems+=("port $n (${port_what[$idx]}) $what: stop what holds it, or set ${port_var[$idx]} to another port, e.g. $(printf "${port_example[$idx]}" "$alt") make start")
    done <<<"$busy"
  fi
  if [ "${#problems[@]}" -gt 0 ]; then
    for p in "${problems[@]}"; do log "ERROR: $p"; done
    [ -z "${1:-}" ] || log "$1"
    log "nothing was started"
    return 1
  fi
  local taken=()
  for i in "${!port_num[@]}"; do taken+=("${port_num[$i]} ${port_what[$i]} (${port_var[$i]})"); done
  log "ports: $(IFS=','; echo "${taken[*]}" | sed 's/,/, /g')"
}

# ------------------------------------------------------------------------------------------------ health
# worker_polling PGID: a process of that group polls the workflow task queue (Temporal names a TypeScript worker
# "<pid>@<host>"): the worker is connected, not merely running. Another worker on the same queue does not count.
worker_polling() {
  "$TEMPORAL_BIN" task-queue describe --task-queue "${TEMPORAL_TASK_QUEUE:-external-signals}" --namespace "$TEMPORAL_NAMESPACE" \
    --address "$TEMPORAL_ADDRESS" --command-timeout 3s -o json |
    node -e '
      const fs = require("fs");
      const group = process.argv[1];
      const ours = new Set(fs.readdirSync("/proc").filter((p) => {
        try {
          const stat = fs.readFileSync(`/proc/${p}/stat`, "utf8");
          return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2] === group;
        } catch { return false; }
      }));
      let text = "";
      process.stdin.on("data", (c) => (text += c)).on("end", () => {
        const pollers = JSON.parse(text).pollers || [];
        process.exit(pollers.some((p) => p.taskQueueType === "workflow" && ours.has(String(p.identity).split("@")[0])) ? 0 : 1);
      });' "$1"
}

# bridge_answered LOG OFFSET: each demo account's bridge has had its first answer from the ingress (hello or a
# refusal) in what LOG got after OFFSET. Prints the refused ones, "account: error".
bridge_answered() {
  tail -c +"$(($2 + 1))" "$1" | node -e '
    const accounts = require(process.argv[1]).accounts.filter((a) => a.bridgeToken).map((a) => a.id);
    const last = new Map();
    let text = "";
    process.stdin.on("data", (c) => (text += c)).on("end", () => {
      for (const line of text.split("\n")) {
        let l;
        try { l = JSON.parse(line); } catch { continue; }
        if (l.event === "hello" || l.event === "connection_error") last.set(l.accountId, l);
      }
      if (!accounts.every((a) => last.has(a))) process.exit(1);
      for (const a of accounts) if (last.get(a).event !== "hello") console.log(`${a}: ${last.get(a).error}`);
    });' "$root/$REGISTRY"
}
