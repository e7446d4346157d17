"""``psdbench site DATASET... -o DIR``: a static results site, offline and from any static host.

Pages (Jinja2 templates in ``templates/``, one stylesheet and one small script in ``static/``, no
external URL):

* ``index.html``: what the datasets hold (rows in and out of the merge), the setups with their
  calibration ratio, and per setup the report's winners per family and instance set at each target;
* ``solvers/<name>.html``: every row of one solver across instances, setups and builds; each row an
  anchor, filters kept in the address;
* ``sets/<name>.html``: every configuration's time to each target on each instance, per setup;
* ``machines/<setup>.html``: the setup's fingerprint, pools, Dask workers, runs and calibration;
* ``history.html``: configurations across builds, on the instances common to the builds compared;
* ``rules.html``: the report's glossary (the rules, stated once, by the report);
* ``data/``: the combined dataset itself (its Parquet tables, manifest and points, plus
  ``cells.csv``): the numbers are downloadable, and ``psdbench verify DIR/data`` re-checks them.

The folder is written beside its target and swapped in whole; a folder that is not a psdbench site
is refused before anything is read.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

__all__ = ["MARKER", "build_site"]

#: Written last into a site folder: the folder is psdbench's to replace.
MARKER = ".psdbench-site"


def _options() -> dict[str, Any]:
    """The report's options (targets, floor) and the families' declared ranking metrics."""
    from psdbench.api import ranking_metric
    from psdbench.report import DEFAULT_OPTIONS

    opts = {k: DEFAULT_OPTIONS[k] for k in ("tolerances", "gap_floor")}
    try:
        from psdbench.registry import discover

        reports = discover().reports
    except Exception:  # a broken plugin must not stop a site: ranked by gap, as the report would without it
        reports = {}
    opts["ranking_metrics"] = {getattr(sec, "family", "*"): m for sec in reports.values()
                               if (m := ranking_metric(sec)) is not None}
    return opts


def _environment() -> Any:
    import jinja2

    from psdbench.report.fmt import inline_html

    env = jinja2.Environment(loader=jinja2.PackageLoader("psdbench.publish.site", "templates"),
                             autoescape=jinja2.select_autoescape(["html"]), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["md"] = lambda text: jinja2.utils.markupsafe.Markup(inline_html(str(text or "")))
    return env


def build_site(sources: Iterable[str | Path], out: str | Path, options: Mapping[str, Any] | None = None,
               title: str = "psdbench results") -> dict[str, Any]:
    """Write the site of the dataset folders ``sources`` (combined as :func:`psdbench.publish.merge.merge_datasets`
    would) into ``out``, replaced whole.

    Parameters
    ----------
    sources : iterable of path
        Dataset folders (``psdbench export`` / ``merge`` / ``import``).
    out : path
        The site folder: new, empty, or a site psdbench wrote.
    options : mapping, optional
        Overrides of the report's ``tolerances`` and ``gap_floor``.
    title : str

    Returns
    -------
    dict
        ``pages`` (count), ``rows``, ``setups``, ``merge`` (rows in and out) and ``index`` (path).

    Raises
    ------
    PsdbenchError
        A source that is not a dataset or is of a newer schema, or an ``out`` that holds other files:
        before anything is written.
    """
    import importlib.resources as resources

    from psdbench.publish.export import check_target, write_dataset_files
    from psdbench.publish.merge import combine_datasets, merged_manifest
    from psdbench.publish.read import read_manifest
    from psdbench.publish.site import pages
    from psdbench.publish.site.model import site_data
    from psdbench.system.outdir import replace_folder
    from psdbench.system.version import psdbench_version

    paths = [Path(s) for s in sources]
    for p in paths:
        read_manifest(p)
    check_target(out, "-o", marker=MARKER, what="site")
    combined = combine_datasets(paths)
    opts = {**_options(), **dict(options or {})}
    data = site_data(combined.tables, combined.info, [m.metric for m in opts["ranking_metrics"].values()])
    links = pages.Links()
    env = _environment()
    common = {"site_title": title, "version": psdbench_version(), "total_rows": len(data.frame),
              "created": datetime.now(timezone.utc).isoformat(timespec="seconds"), "sources": [str(p) for p in paths]}
    todo: list[tuple[str, str, str, dict[str, Any]]] = [
        ("index.html", "index.html", title, pages.overview_page(data, opts, links)),
        ("history.html", "history.html", "History across builds", pages.history_page(data, opts, links)),
        ("rules.html", "rules.html", "Rules and words", pages.rules_page(opts))]
    for solver, rows in data.frame.groupby("solver", sort=True):
        todo.append((links.solver(solver), "solver.html", f"Solver {solver}", pages.solver_page(data, solver, links, rows)))
    for name, rows in data.frame.groupby("set", sort=True):
        todo.append((links.set(name), "set.html", f"Instance set {name}", pages.set_page(data, name, opts, links, rows)))
    for setup in dict.fromkeys(data.setups["setup"]):
        todo.append((links.machine(setup), "machine.html", f"Setup {setup}",
                     pages.machine_page(data, setup, links, combined.tables["runs"])))

    def write(folder: Path) -> dict[str, Path]:
        written = {}
        for rel, template, page_title, ctx in todo:
            target = folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            root = "../" * rel.count("/")
            target.write_text(env.get_template(template).render(**common, **ctx, title=page_title, root=root),
                              encoding="utf-8")
            written[rel] = target
        (folder / "static").mkdir()
        for name in ("site.css", "site.js"):
            (folder / "static" / name).write_bytes(resources.files("psdbench.publish.site").joinpath("static", name).read_bytes())
        (folder / "data").mkdir()
        write_dataset_files(folder / "data", combined.tables, merged_manifest(combined, paths), combined.points)
        combined.tables["cells"].to_csv(folder / "data" / "cells.csv", index=False)
        return written

    replace_folder(out, write, marker=MARKER)
    return {"pages": len(todo), "rows": len(data.frame), "setups": int(data.setups["setup"].nunique()),
            "merge": combined.info, "index": Path(out) / "index.html"}
