#!/usr/bin/python3
"""Every `exspec` command shown in a code block of the README and the docs pages is one the
current binary accepts: its subcommand exists and it knows every flag. Each command runs with
`--help` appended, which makes a subcommand check its flags and print its usage without doing
anything (an unknown flag or subcommand exits non-zero).

  check_commands.py EXSPEC_BINARY ROOT
Exit status: 0 all accepted, 1 a command refused (each one printed with the binary's words)."""
import os, re, shlex, subprocess, sys

from check_links import pages, report


def code_lines(text):
    """Shell lines of the fenced blocks (sh, bash, console or unlabelled), continuations joined."""
    fenced, lang, pending = False, "", ""
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced, lang = not fenced, line.strip()[3:].strip()
            continue
        if not fenced or lang not in ("", "sh", "bash", "console", "shell"):
            continue
        line = re.sub(r"^\s*\$ ", "", line)
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        yield pending + line
        pending = ""


def commands(line):
    """The argument lists of the exspec invocations on a shell line."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return
    current, first = None, True  # first: the word starts a command (not an argument of another)
    for w in words + [";"]:
        if w in (";", "&&", "||", "|", "&") or w.startswith((">", "2>", "<")):
            if current is not None:
                yield current
            current, first = None, w not in (">", "2>", "<") and not w.startswith((">", "2>", "<"))
        elif current is not None:
            current.append(w)
        elif first and os.path.basename(w) == "exspec":
            current = []
        else:
            first = False


def main():
    exspec, root = sys.argv[1], sys.argv[2]
    refused, count = [], 0
    for page in pages(root):
        with open(os.path.join(root, page)) as f:
            text = f.read()
        for line in code_lines(text):
            for args in commands(line):
                if not args or args[0].startswith("-"):
                    continue  # `exspec --help` and the like
                count += 1
                r = subprocess.run([exspec] + args + ["--help"], capture_output=True, text=True, timeout=60)
                if r.returncode != 0:
                    refused.append(f"{page}: exspec {' '.join(args)}: {r.stderr.strip().splitlines()[-1:]}")
    return report("commands", "accepted", "refused", refused, count, len(pages(root)))


if __name__ == "__main__":
    sys.exit(main())
