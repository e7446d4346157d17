"""Export and merge of a 10,000-row results dataset: seconds, measured in one process.

A store of ``--rows`` cells is made from a real one (default: a fresh run of the default suite's
store): its rows copied under new cell keys and runs, so the dataset has the families' real columns
and metrics.  Then, each timed ``--repeats`` times (median and range printed): ``export`` of the
whole store, ``merge`` of that dataset with a second export of half of its runs (rows in = rows out
minus the identical ones), ``read`` of the merged dataset by pandas alone, and ``site`` of the two
datasets (``psdbench site``: every page, and the data under it).  The sizes on disk follow.

    PSDBENCH_CALIBRATION=off python benchmarks/scripts/publish/dataset_scale.py --db psdbench-results.sqlite [--rows 10000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path


def grow(src: Path, dst: Path, rows: int) -> list[str]:
    """``dst``: ``src``'s current rows copied under new cell keys until it holds ``rows`` cells, one
    run per copy; returns the run ids."""
    from psdbench.harness.grid.inputs import ReadOnlyStore
    from psdbench.harness.store.db import Store
    from psdbench.harness.store.results import CellResult

    base = ReadOnlyStore(src)
    cells = base.results_frame(flatten_metrics=False).to_dict("records")
    runs = base.runs_frame().iloc[0]
    refs = base.references_frame().to_dict("records")
    store = Store(dst)
    fields = set(CellResult.__dataclass_fields__)
    run_ids, n = [], 0
    while n < rows:
        run_id = f"copy-{len(run_ids)}-{uuid.uuid4().hex[:6]}"
        store.start_run(run_id, "dataset_scale", *(__import__("json").loads(runs[c]) for c in ("machine", "versions", "threads")))
        batch = []
        for c in cells[: rows - n]:
            row = {k: v for k, v in c.items() if k in fields}
            row.update(run_id=run_id, cell_key=f"{c['cell_key']}-{len(run_ids)}")
            batch.append(CellResult(**row))
        store.write_many(batch, refs if not run_ids else ())
        store.finish_run(run_id)
        run_ids.append(run_id)
        n += len(batch)
    store.close()
    return run_ids


def timed(fn, repeats: int) -> tuple[float, float, float]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times), max(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="a real store to copy rows from")
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    import pandas as pd

    from psdbench.harness.grid.inputs import ReadOnlyStore
    from psdbench.publish.export import export_dataset
    from psdbench.publish.merge import merge_datasets
    from psdbench.publish.read import read_dataset
    from psdbench.publish.site import build_site
    from psdbench.registry import discover

    reg = discover()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        run_ids = grow(Path(args.db), d / "big.sqlite", args.rows)
        store = ReadOnlyStore(d / "big.sqlite")
        half = run_ids[: max(1, len(run_ids) // 2)]
        export_dataset(store, d / "half", runs=half, registry=reg)
        rows = {}
        for name, fn in (("export", lambda: export_dataset(store, d / "all", registry=reg)),
                         ("merge", lambda: rows.update(merge_datasets([d / "all", d / "half"], d / "merged"))),
                         ("read", lambda: [pd.read_parquet(d / "merged" / f) for f in ("cells.parquet", "runs.parquet")]),
                         ("site", lambda: build_site([d / "all", d / "half"], d / "site"))):
            med, lo, hi = timed(fn, args.repeats)
            print(f"{name:7s} {med:7.2f} s  (range {lo:.2f} to {hi:.2f} s, {args.repeats} repeats)")
        cells = read_dataset(d / "merged")["cells"]
        print(f"rows: {len(cells)} cells in the merged dataset; merge rows in {rows['rows_in']['cells']}, "
              f"out {rows['rows_out']['cells']}, identical kept once {rows['identical_rows_kept_once']['cells']}")
        for name in ("big.sqlite", "all", "merged", "site"):
            p = d / name
            size = p.stat().st_size if p.is_file() else sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
            pages = len(list(p.rglob("*.html"))) if p.is_dir() else 0
            print(f"on disk: {name:10s} {size / 2**20:7.1f} MiB" + (f" ({pages} pages)" if pages else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
