"""Add up the JUnit XML reports of every pytest run into one closing line."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET  # noqa: S405 - our own pytest's reports, not untrusted input


def main(paths: list[str]) -> None:
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for path in paths:
        try:
            root = ET.parse(path).getroot()  # noqa: S314 - see above
        except (OSError, ET.ParseError):
            continue
        for suite in root.iter("testsuite"):
            for key in totals:
                totals[key] += int(suite.get(key, 0))
    failed = totals["failures"] + totals["errors"]
    passed = totals["tests"] - failed - totals["skipped"]
    print(f"{passed} passed, {failed} failed, {totals['skipped']} skipped")


if __name__ == "__main__":
    main(sys.argv[1:])
