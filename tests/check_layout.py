#!/usr/bin/env python3
"""The source tree's layout rule (docs/design.md, "Layout"): folders follow the path a request
takes, and no C++ file includes one of a folder above its own or beside it on the same floor.
Also: no includes form a circle between files, a .cpp and its .h counting as one, as they are
read together; every source folder is checked, none exempt. And serving code (actors/ but the
paper's, config/, chat/, jobs/, http/) includes nothing of the oracle (model/oracle/) or of the
paper's batch code (model/paper/): they stay apart from what serves.

Usage: check_layout.py ROOT. Exits 1 naming every include that goes up and every circle."""
import os
import re
import sys

# Lowest floor first: a file may include its own folder's files and those of floors below its own.
# Folders on one floor are siblings that include nothing of each other.
ORDER = [
    "grammar",
    "model/gguf",
    "model/kernels",
    "model",
    "model/oracle",
    "model/tokenizer",
    "model/tools",
    "model/paper",
    "actors/scheduler",
    "actors/jobs",
    "actors/paper",
    "actors",
    "config",
    "chat/jinja",
    ("chat", "jobs"),
    "http",
    "bench",
    "app",
]
TOPS = ("model", "grammar", "actors", "config", "chat", "jobs", "http", "bench", "app")
# Serving code, and what it keeps apart from: the oracle and the paper's batch code.
SERVING = ("actors", "config", "chat", "jobs", "http")
NOT_SERVING = ("actors/paper",)
APART = ("model/oracle/", "model/paper/")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder(path):
    return os.path.dirname(path)


def unit(path):
    return os.path.splitext(path)[0]


def sources(root):
    for top in TOPS:
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith((".h", ".cpp", ".inc")):
                    yield os.path.relpath(os.path.join(d, f), root)


def serving(folder_):
    inside = lambda tops: any(folder_ == t or folder_.startswith(t + "/") for t in tops)
    return inside(SERVING) and not inside(NOT_SERVING)


def main(root):
    rank = {f: i for i, floor in enumerate(ORDER) for f in ((floor,) if isinstance(floor, str) else floor)}
    problems, edges = [], {}
    for path in sorted(sources(root)):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        here = folder(path)
        if here not in rank:
            problems.append(f"{path}: its folder {here}/ has no place in the layout (tests/check_layout.py ORDER)")
            continue
        for inc in INCLUDE.findall(text):
            if not os.path.exists(os.path.join(root, inc)):
                continue  # a file of the folder itself, or generated
            there = folder(inc)
            if there not in rank:
                problems.append(f"{path}: includes {inc}, outside the layout")
            elif rank[there] > rank[here]:
                problems.append(f"{path}: includes {inc}, a folder above its own ({there}/ over {here}/)")
            elif rank[there] == rank[here] and there != here:
                problems.append(f"{path}: includes {inc}, a folder beside its own on one floor ({there}/, {here}/)")
            if serving(here) and inc.startswith(APART):
                problems.append(f"{path}: includes {inc}, which serving code keeps apart from (the oracle, the paper)")
            if unit(inc) != unit(path):
                edges.setdefault(unit(path), set()).add(unit(inc))
    # Circles between units: a depth-first search that reports each back edge's loop once.
    state, stack, seen = {}, [], set()

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(edges.get(u, ())):
            if state.get(v) == 1:
                loop = stack[stack.index(v):] + [v]
                key = frozenset(loop)
                if key not in seen:
                    seen.add(key)
                    problems.append("a circle of includes: " + " -> ".join(loop))
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(edges):
        if u not in state:
            visit(u)
    for p in problems:
        print(p)
    if not problems:
        print(f"layout: every include stays in its folder or goes down; no circle among {len(edges)} units; "
              "serving includes neither the oracle nor the paper")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
