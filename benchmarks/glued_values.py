"""Every value the built book glues into its prose, one line each: page, name, value.

Run after ``make book``; two dumps, before and after a change that should keep the numbers,
give an empty ``diff``::

    python benchmarks/glued_values.py > before.tsv      # on the old commit's build
    python benchmarks/glued_values.py > after.tsv       # on the new one's
    diff before.tsv after.tsv

It reads the glue files that myst-nb writes beside each executed notebook
(``_build/jupyter_execute/**/NAME.glue.json``, one output per glued name), and gives each value as
the text that ``{glue:text}`` would show: the output's ``text/plain`` (or its Markdown or HTML where
it has no plain text).
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def glued_values(executed: Path) -> Iterator[tuple[str, str, str]]:
    """The (page, name, value) of every glued output under ``executed``, in page order."""
    for glue_file in sorted(executed.rglob("*.glue.json")):
        page = glue_file.relative_to(executed).as_posix().removesuffix(".glue.json")
        for name, output in sorted(json.loads(glue_file.read_text()).items()):
            data = output.get("data", {})
            value = next((data[kind] for kind in ("text/plain", "text/markdown", "text/html")
                          if kind in data), "")
            value = "".join(value) if isinstance(value, list) else str(value)
            yield page, name, value.replace("\n", "\\n").replace("\t", " ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=ROOT / "_build",
                        help="the book's build folder (default: _build)")
    args = parser.parse_args()
    executed = args.build / "jupyter_execute"
    if not any(executed.rglob("*.glue.json")):
        parser.error(f"no glued values in {executed}: run `make book` first")
    for row in glued_values(executed):
        print("\t".join(row))


if __name__ == "__main__":
    main()
