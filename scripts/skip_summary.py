#!/usr/bin/env python3
"""Prints one line per reason for the tests CTest skipped: "N tests skipped: REASON".

Reads the JUnit file of `ctest --output-junit FILE` (scripts/test.sh). A GoogleTest skip prints
"FILE:LINE: Skipped" and then its message; the message's first line is the reason, so tests that
skip for the same reason (tests/support/test_data.h's "need stories260K, see docs/data.md") count
together. Prints nothing when no test was skipped.
"""
import collections
import sys
import xml.etree.ElementTree as ET


def reason(output):
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.rstrip().endswith(": Skipped") and i + 1 < len(lines):
            return lines[i + 1].strip() or "(no reason given)"
    # Not GoogleTest's skip (CTest's own "Not Run", e.g. "Unable to find executable: ..."): the
    # first line it printed.
    return next((line.strip() for line in lines if line.strip()), "(no reason printed)")


def main(path):
    counts = collections.Counter()
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.find("skipped") is not None:
            counts[reason(case.findtext("system-out") or "")] += 1
    for why, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        print(f"{n} test{'s' if n != 1 else ''} skipped: {why}")


if __name__ == "__main__":
    main(sys.argv[1])
