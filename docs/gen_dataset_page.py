"""Write the column tables of ``docs/dataset.md`` from :mod:`psdbench.publish.schema` (the prose
around them is written by hand): each table's section keeps its heading and opening paragraph, and
its ``| column | type | meaning |`` table is the schema's.

    python docs/gen_dataset_page.py            # rewrite the tables
    python docs/gen_dataset_page.py --check    # exit 1 if the page is out of date
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parent / "dataset.md"
HEAD = "| column | type | meaning |\n|---|---|---|\n"


def render(text: str) -> str:
    """``text`` with every table section's column table replaced by the schema's."""
    from psdbench.publish.schema import SCHEMA_VERSION, TABLES

    for file, cols in TABLES.values():
        a = text.index(f"## `{file}`")
        s = text.index(HEAD, a)
        e = s + len(HEAD)
        while e < len(text) and text.startswith("| `", e):
            e = text.index("\n", e) + 1
        text = text[:s] + HEAD + "".join(f"| `{c.name}` | {c.type} | {c.doc} |\n" for c in cols) + text[e:]
    import re

    return re.sub(r"schema version \d+", f"schema version {SCHEMA_VERSION}", text, count=1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the page is out of date, write nothing")
    args = ap.parse_args(argv)
    old = PAGE.read_text()
    new = render(old)
    if args.check:
        if new != old:
            print("out of date (run python docs/gen_dataset_page.py): docs/dataset.md", file=sys.stderr)
            return 1
        return 0
    if new != old:
        PAGE.write_text(new)
        print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
