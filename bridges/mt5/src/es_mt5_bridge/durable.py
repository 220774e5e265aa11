"""Files that must survive a crash whole: written to a temporary file, fsynced, then renamed over the old one, so a
reader finds either the old content or the new, never half of one."""
from __future__ import annotations

import json
import os
import sys
from typing import Any


def replace_json(path: str, value: Any) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(value, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    if sys.platform != "win32":
        # The rename itself is only durable once the directory is (POSIX); Windows offers no directory handle to sync.
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
