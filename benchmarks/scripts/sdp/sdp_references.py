"""The SDP family's references on SDPLIB problems, beside the published values.

Usage::

    PSDBENCH_DATA=/work/shared/datasets OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python benchmarks/scripts/sdp/sdp_references.py [--problems mcp250-1 theta3 ...] [--limit 900] [--json out.jsonl]
    python benchmarks/scripts/sdp/sdp_references.py --table out.jsonl      # the Markdown table of a saved run

Each problem's reference is computed as the harness computes it
(:meth:`SdpInstance.certified_reference`, the family's ``reference.py``) with ``--limit`` seconds,
and printed as one JSON line (value, lower bound, the solvers, the message, the time).  The table
gives the reference in SDPLIB's sign, its kind (certified interval or agreed value), the
published value and whether the reference rounds to it at its printed digits.  Without
``--problems``: every problem under ``$PSDBENCH_DATA/sdplib``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

from psdbench.families.sdp.datasets import SdplibCollection
from psdbench.families.sdp.problem import SdpStandard
from psdbench.families.sdp.section.report import _digits_agree


def table(rows: list[dict]) -> str:
    out = ["| problem | reference (SDPLIB sign) | kind | solvers | published | agrees | time s |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        v, lo, pub, dg = r["value"], r["lower"], r.get("published"), r.get("digits")
        one = r.get("lower_one_sided")
        kind = "none" if v is None else ("certified [%.10g, %.10g]" % (-v, -lo) if lo is not None else
                                         ("one solve" if "ONE SOLVE" in r["message"] else
                                          "most accurate" if "DISAGREE" in r["message"] else "agreed")
                                         + (" (LOOSE)" if "LOOSE" in r["message"] else "")
                                         + ("" if one is None else ", certified bound %.12g (SDPLIB sign)" % -one))
        agree = "-" if v is None or pub is None else ("yes" if _digits_agree(v, pub, dg) else "NO")
        out.append(f"| {r['name']} | {'-' if v is None else f'{-v:.10g}'} | {kind} | {r['solver']} | "
                   f"{'-' if pub is None else f'{-pub:.{max(int(dg or 1), 1)}g}'} | {agree} | {r['time_s']:.1f} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", nargs="*")
    ap.add_argument("--limit", type=float, default=900.0, help="seconds per reference")
    ap.add_argument("--json", help="append the JSON lines to this file too")
    ap.add_argument("--table", help="print the table of a saved JSON-lines file and stop")
    args = ap.parse_args()
    if args.table:
        with open(args.table) as fh:
            print(table([json.loads(line) for line in fh if line.startswith("{")]))
        return
    warnings.simplefilter("ignore")
    coll = SdplibCollection()
    names = args.problems or [n.split("/", 1)[-1] for n in coll.names()]
    rows = []
    for name in names:
        inst = SdpStandard().build(coll.load(name), {}, 0)
        t0 = time.perf_counter()
        r = inst.certified_reference(time_limit_s=args.limit)
        r.update(name=name, time_s=round(time.perf_counter() - t0, 2), published=inst.published,
                 digits=inst.published_digits)
        line = json.dumps(r)
        print(line, file=sys.stderr, flush=True)
        if args.json:
            with open(args.json, "a") as fh:
                fh.write(line + "\n")
        rows.append(r)
    print(table(rows))


if __name__ == "__main__":
    main()
