"""Let an asv environment see the packages of the environment psdbench is installed in.

``python -m psdbench.asvbench.envlink ENV_DIR``, run by the Python of the environment that has
psdbench (the configuration ``psdbench asv init`` writes names it), writes
``psdbench-host.pth`` into the site-packages of the virtualenv asv made in ``ENV_DIR``: that
environment then imports psdbench and its dependencies from here, after its own packages (the
plugin's commit asv installs there comes first), and asv installs nothing from an index.
"""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

PTH = "psdbench-host.pth"


def host_site_dirs() -> list[str]:
    """The site-packages folders of this environment (purelib, platlib), each once."""
    paths = sysconfig.get_paths()
    return list(dict.fromkeys(str(Path(paths[k]).resolve()) for k in ("purelib", "platlib")))


def link(env_dir: Path) -> Path:
    """Write the ``.pth`` into the asv environment ``env_dir``; returns its path."""
    sites = sorted(Path(env_dir).glob("lib/python*/site-packages")) or sorted(Path(env_dir).glob("Lib/site-packages"))
    if not sites:
        raise SystemExit(f"psdbench: error: {env_dir} holds no virtualenv (no lib/python*/site-packages)")
    lines = "".join(f"import site; site.addsitedir({d!r})\n" for d in host_site_dirs())
    out = sites[0] / PTH
    out.write_text(lines, encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("psdbench: error: usage: python -m psdbench.asvbench.envlink ENV_DIR", file=sys.stderr)
        return 2
    link(Path(args[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
