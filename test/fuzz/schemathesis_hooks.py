"""Schemathesis hooks for test/fuzz/schemathesis.test.ts (loaded through SCHEMATHESIS_HOOKS).

- Just before each call, half of the generated webhook requests get the real secret (FUZZ_SECRET) in their body and the
  real account (FUZZ_ACCOUNT) in the per-account URL, so the fuzzer gets past authentication into validation, the
  limiters and the Temporal start, not only to the 401. Which half is decided by the generated data itself, so a case shrinks and replays the same way.
- Every answer is appended to FUZZ_LOG as one JSON line (method, path, status), which the jest test counts.
"""
import json
import os
import zlib

import schemathesis

SECRET = os.environ["FUZZ_SECRET"]
ACCOUNT = os.environ["FUZZ_ACCOUNT"]
LOG = os.environ["FUZZ_LOG"]


def _even(value) -> bool:
    return zlib.crc32(repr(value).encode("utf-8", "surrogatepass")) % 2 == 0


@schemathesis.hook
def before_call(context, case, kwargs):
    # before_call runs in every phase (the coverage phase does not go through the map_* hooks). The secret and the
    # account go together: a real secret on an unknown account is a 401 like a random one.
    if not _even((case.body, case.path_parameters)):
        return
    # Also where the generated body has no secret at all: the coverage phase leaves required fields out one by one,
    # and a body without a secret stops at the 401 whatever else it holds.
    if isinstance(case.body, dict):
        case.body["secret"] = SECRET
    if isinstance(case.path_parameters, dict) and "accountId" in case.path_parameters:
        case.path_parameters["accountId"] = ACCOUNT


@schemathesis.hook
def after_call(context, case, response):
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps({"method": case.method, "path": case.formatted_path, "status": response.status_code}) + "\n")
