#!/usr/bin/env bash
# Python for bridges/mt5 (the MT5 bridge: standard library only): its pytest tests, the bridge process the
# conformance suite runs, and its wheel (`make dist`, scripts/dist-mt5.ts: setuptools and wheel, no build isolation).
# pytest, mypy, setuptools and wheel come from PyPI into a venv cached outside the checkout. Prints the venv's python.
set -euo pipefail
venv="${XDG_CACHE_HOME:-$HOME/.cache}/external-signals/mt5-bridge-venv"
if ! python3 -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 9))' >/dev/null 2>&1; then
  echo "ensure-python: installing python3 and python3-venv with apt-get" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  { $sudo apt-get update && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y python3 python3-venv; } >&2
fi
ready='import pytest, mypy, wheel, setuptools, sys; sys.exit(int(setuptools.__version__.split(".")[0]) < 61)'
if ! "$venv/bin/python" -c "$ready" >/dev/null 2>&1; then
  # A venv that only lacks a package gets it added (other checkouts may be running its pytest right now).
  "$venv/bin/python" -c 'import sys' >/dev/null 2>&1 || { rm -rf "$venv"; python3 -m venv "$venv" >&2; }
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'pytest>=7,<9' 'mypy>=1.8,<2' 'setuptools>=61' 'wheel' >&2
fi
echo "$venv/bin/python"
