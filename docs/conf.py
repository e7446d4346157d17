"""Sphinx configuration: the Markdown pages of ``docs/`` (myst-parser), among them the API reference
``api.md``, plain Markdown that ``docs/gen_api_page.py`` writes from the docstrings of
``psdbench.api``, ``psdbench.testing`` and ``psdbench.session`` (so it reads without Sphinx too);
autodoc and napoleon stay for a page that asks for them.  Built with warnings as errors by
``tests/test_docs.py``::

    sphinx-build -W -b html docs docs/_build/html
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

project = "psdbench"
author = "psdbench authors"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "gen_family_pages.py", "gen_api_page.py"]
myst_heading_anchors = 3
# links from the pages to files of the repository (src/..., CHANGELOG.md) are not documents
suppress_warnings = ["myst.xref_missing"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
napoleon_use_ivar = True  # "Attributes" sections as fields: no second description of a dataclass field
nitpicky = False
html_theme = "alabaster"
html_static_path: list[str] = []
