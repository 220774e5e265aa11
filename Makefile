.PHONY: start test test-cluster lint cluster build dist install clean

# Everything runs on this machine: Temporal dev server, redis-server, worker, ingress, paper bridge.
start:
	@bash scripts/start.sh

# Real Temporal and Redis on free loopback ports; ends with `N passed, N failed, N skipped`.
test:
	@bash scripts/test.sh

# The service on the cluster profile: PostgreSQL, the real Temporal server and its UI, Redis, two workers and two
# ingress processes behind a loopback round-robin, the paper bridge (docs/cluster-profile.md).
cluster:
	@bash scripts/cluster.sh

# The end-to-end, integration and conformance suites, and the cluster's own fault test, against the cluster profile: the real Temporal server on a
# PostgreSQL of the run's own (docs/cluster-profile.md); same summary line.
test-cluster:
	@TEMPORAL_PROFILE=cluster bash scripts/test.sh test/e2e test/integration test/conformance test/fault/cluster-faults.test.ts

# ESLint (strict type-checked rules), Prettier's check, no import cycle, src/domain importing nothing of ours.
lint:
	@bash scripts/lint.sh

build:
	@export PATH="$$(bash scripts/ensure-node.sh):$$PATH" && npm run build

# The build, and the MT5 bridge package in dist/mt5-bridge/: the wheel, and the zip the service hands out
# (README, config template, Windows start scripts; docs/mt5-bridge.md).
dist:
	@bash scripts/dist.sh

install:
	@export PATH="$$(bash scripts/ensure-node.sh):$$PATH" && npm ci

clean:
	rm -rf dist .run coverage
