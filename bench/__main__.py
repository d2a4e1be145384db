"""``make bench`` (``python -m bench``): the in-process benchmarks, one after another.

Each runs in its own interpreter, so one's caches and settings never touch the next. The ones
that start servers (``bench/bench_load.py``, ``bench/bench_fanout.py`` and
``bench/bench_campaign_streams.py``: a throwaway PostgreSQL, Redis and uvicorn workers) take
minutes; name them to run them too: ``python -m bench load fanout campaign_streams``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUICK = ["rules", "siblings", "rules_api", "combat", "sheet", "encounter", "matchups", "forecast"]
SLOW = ["load", "fanout", "campaign_streams"]


def main(argv: list[str]) -> int:
    unknown = [name for name in argv if name not in QUICK + SLOW]
    if unknown:
        print(f"Unknown benchmark {', '.join(unknown)}; choose from {', '.join(QUICK + SLOW)}.")
        return 2
    failed = []
    for name in argv or QUICK:
        print(f"\n===== bench_{name} =====", flush=True)
        rc = subprocess.call([sys.executable, str(HERE / f"bench_{name}.py")], cwd=HERE.parent)
        if rc:
            failed.append(name)
    if failed:
        print(f"\nFailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
