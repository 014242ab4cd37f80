#!/usr/bin/python3
"""Every relative link in the README and the docs pages resolves: the file exists and, for a
link with an anchor, the target page has a heading with that GitHub slug.

  check_links.py ROOT
Exit status: 0 every link resolves, 1 a broken link (each one printed)."""
import os, re, sys

PAGES = ["README.md", "config/README.md", "bench/README.md"]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def prose(text):
    """The lines outside fenced code blocks."""
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            yield line


def pages(root):
    """The README, config/ and bench/ READMEs, and every docs/ page (paths relative to root)."""
    return PAGES + sorted("docs/" + p for p in os.listdir(os.path.join(root, "docs")) if p.endswith(".md"))


def report(what, good, bad, problems, count, n_pages):
    """Prints each problem and the count line; the exit status (1 also when nothing was found)."""
    for p in problems:
        print(bad.upper() + " " + p)
    print(f"{what}: {count - len(problems)} {good}, {len(problems)} {bad} in {n_pages} pages")
    return 1 if problems or count == 0 else 0


def slug(heading):
    """GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to '-'."""
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return s.replace(" ", "-")


def anchors(path):
    with open(path) as f:
        return {slug(l.lstrip("#")) for l in prose(f.read()) if re.match(r"#{1,6} ", l)}


def main():
    root = sys.argv[1]
    broken, count = [], 0
    for page in pages(root):
        path = os.path.join(root, page)
        with open(path) as f:
            lines = list(prose(f.read()))
        for line in lines:
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                    continue
                count += 1
                file, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
                if not os.path.exists(dest):
                    broken.append(f"{page}: {target}: no such file")
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    broken.append(f"{page}: {target}: no heading with anchor #{anchor}")
    return report("links", "resolve", "broken", broken, count, len(pages(root)))


if __name__ == "__main__":
    sys.exit(main())
