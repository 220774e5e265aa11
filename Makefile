.PHONY: start test build install clean

# Everything runs on this machine: Temporal dev server, redis-server, worker, ingress, paper bridge.
start:
	@bash scripts/start.sh

# Real Temporal and Redis on free loopback ports; ends with `N passed, N failed, N skipped`.
test:
	@bash scripts/test.sh

build:
	npm run build

install:
	npm ci

clean:
	rm -rf dist .run coverage
