#!/usr/bin/env bash
# Prints the directory of Spotware's cTrader Open API definitions that the cTrader tests check the connector and its
# double against (test/helpers/ctrader-proto.ts): protoc's Python output (`*_pb2.py`, each embedding its .proto file
# as a serialized descriptor) from a pinned PyPI package, fetched with pip by name, version and hash, without its
# dependencies, and unpacked once into the cache outside the checkout. Nothing of it is imported or run: the tests
# read the descriptors as data. docs/ctrader-connector.md says why this package and how its definitions compare with
# the version the connector was written for. Logs go to stderr.
set -euo pipefail

PACKAGE=pynesys-pynecore-ctrader
VERSION=0.9.4
SHA256=cd49d6467f23fd5f92bcf8aa71b715366aac84b8b35460e6bff1ae4e96ac529a
# shellcheck source=cached-install.sh
. "$(dirname "$0")/cached-install.sh"
dir="$cache_root/ctrader-open-api-definitions/$PACKAGE-$VERSION"
messages="$dir/pynecore_ctrader/messages"

cached_install ensure-ctrader-definitions "$dir" "$messages"

python="$(bash "$(dirname "$0")/ensure-python.sh")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "$PACKAGE==$VERSION --hash=sha256:$SHA256" >"$work/requirements.txt"
"$python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: --require-hashes \
  -r "$work/requirements.txt" -d "$work" >&2
find "$dir" -mindepth 1 -maxdepth 1 ! -name .install.lock -exec rm -rf {} +
"$python" -m zipfile -e "$work"/*.whl "$dir" >&2
ls "$messages"/OpenApiMessages_pb2.py >/dev/null
installed
