#!/usr/bin/env bash
# ensure-temporal-server.sh server|sql|ui: prints the absolute path of one binary of the cluster profile, built once
# from its Go module into the cache outside the checkout (docs/cluster-profile.md):
#   server  the Temporal server, all services in one process (go.temporal.io/server/cmd/server)
#   sql     its schema tool for PostgreSQL (go.temporal.io/server/cmd/tools/sql)
#   ui      the Temporal UI server (github.com/temporalio/ui-server/v2/cmd/server; also named `server`, so its own dir)
# Cold: about 7 minutes and 2.6 GB of memory for the server; warm: one stat.
set -euo pipefail
TEMPORAL_SERVER_VERSION=v1.32.1 # later patch releases ask for a newer Go than this machine's
TEMPORAL_UI_VERSION=v2.55.0
here="$(dirname "$0")"
case "${1:-}" in
  server) exec bash "$here/go-install-cached.sh" "temporal-server-$TEMPORAL_SERVER_VERSION" "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" server ;;
  sql) exec bash "$here/go-install-cached.sh" "temporal-sql-$TEMPORAL_SERVER_VERSION" "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION" sql ;;
  ui) exec bash "$here/go-install-cached.sh" "temporal-ui-server-$TEMPORAL_UI_VERSION" "github.com/temporalio/ui-server/v2/cmd/server@$TEMPORAL_UI_VERSION" server ;;
  *) echo "usage: $0 server|sql|ui" >&2; exit 2 ;;
esac
