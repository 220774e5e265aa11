#!/usr/bin/env bash
# Prints the path of a launcher for Temporal's time-skipping test server, built once into the cache outside the
# checkout from Maven (the Java SDK's io.temporal:temporal-test-server and its classpath); logs go to stderr. The
# workflow tests (test/workflow/) hand it to @temporalio/testing as an existing executable: the SDK's own download
# of the native test server needs the internet. The launcher takes what the SDK passes: the port, then flags.
# Needs java and maven (installed with apt-get when missing); a cold fetch is about a minute, a warm call one stat.
set -euo pipefail
VERSION=1.31.0
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=cached-install.sh
. "$here/cached-install.sh"
dir="$cache_root/temporal-test-server-$VERSION"
launcher="$dir/temporal-test-server"
cached_install test-server "$dir" "$launcher"

if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  echo "ensure-test-server: installing java and maven with apt-get" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  { $sudo apt-get update && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y default-jdk-headless maven; } >&2
fi
rm -rf "$dir/lib"
mvn -q -B -f "$here/test-server/pom.xml" -DtestServerVersion="$VERSION" \
  dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dir/lib" >&2
cat >"$launcher" <<LAUNCHER
#!/bin/sh
# Temporal's time-skipping test server $VERSION (scripts/ensure-test-server.sh): <port> [--enable-time-skipping]
exec java -XX:+UseSerialGC -Xss1m -cp "$dir/lib/*" io.temporal.testserver.TestServer "\$@"
LAUNCHER
chmod +x "$launcher"
installed
