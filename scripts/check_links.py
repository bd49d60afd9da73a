#!/usr/bin/env python3
"""Checks that every relative link in the repository's Markdown files resolves.

A link [text](path), ![alt](path) or [name]: path that names no scheme (not http:, mailto:, ...)
must name a file or folder that exists, inside the repository; a #fragment on a Markdown file (or
alone, for the same file) must name one of its headings, as GitHub makes their anchors. Links in
code spans and fenced code blocks are not links. Build folders, out/ and third_party/ are skipped.

Prints each dead link as FILE:LINE: what, and exits 1 if there is one. Run by ctest (DocsCheck)
and usable alone: scripts/check_links.py [REPO_ROOT]
"""
import functools
import os
import re
import sys

SKIP_DIRS = {".git", ".cache", "out", "third_party", "node_modules"}
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def markdown_files(root):
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("build"))
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(folder, name)


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    fenced = None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fence = FENCE.match(line)
            if fence:
                if fenced is None:
                    fenced = fence.group(1)
                elif fence.group(1) == fenced:
                    fenced = None
                continue
            if fenced is None:
                yield number, line


def slug(heading):
    """The anchor GitHub gives a heading: its text, lowercase, punctuation dropped, '-' for ' '."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@functools.lru_cache(maxsize=None)
def anchors(path):
    """The anchors of a Markdown file's headings; a repeated heading's get -1, -2, ..."""
    found = set()
    for _, line in prose_lines(path):
        heading = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        base = anchor = slug(heading.group(1))
        n = 0
        while anchor in found:
            n += 1
            anchor = f"{base}-{n}"
        found.add(anchor)
    return found


def check(root, path):
    """Yields 'FILE:LINE: what' for each dead link in one file."""
    rel = os.path.relpath(path, root)
    for number, line in prose_lines(path):
        line = re.sub(r"`[^`]*`", "``", line)  # a code span is not a link
        targets = [m.group(1) for m in INLINE.finditer(line)]
        targets += [m.group(1) for m in REFERENCE.finditer(line)]
        for target in targets:
            target = target.strip("<>")
            if not target or SCHEME.match(target):
                continue
            file_part, _, fragment = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if os.path.relpath(resolved, root).startswith(".."):
                yield f"{rel}:{number}: {target}: points outside the repository"
            elif not os.path.exists(resolved):
                yield f"{rel}:{number}: {target}: no such file"
            elif fragment and resolved.endswith(".md") and fragment.lower() not in anchors(resolved):
                yield f"{rel}:{number}: {target}: no heading #{fragment} in {os.path.relpath(resolved, root)}"


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    dead = [problem for path in markdown_files(root) for problem in check(root, path)]
    for problem in dead:
        print(problem)
    if dead:
        print(f"{len(dead)} dead link(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
