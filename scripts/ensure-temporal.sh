#!/usr/bin/env bash
# Prints the absolute path of the Temporal CLI (which embeds the dev server) on stdout; logs go to stderr.
# Cold path: builds it once with `go install` into a per-user cache (scripts/go-install-cached.sh). Warm path: one
# stat. If the build fails, this fails loudly: there is no fallback and no fake server.
set -euo pipefail
TEMPORAL_CLI_VERSION=v1.5.1 # later tags do not build with `go install`
exec bash "$(dirname "$0")/go-install-cached.sh" "temporal-$TEMPORAL_CLI_VERSION" "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION" temporal
