"""Results that leave the machine: a store exported as a documented, versioned dataset.

* :mod:`~psdbench.publish.schema`: the dataset's tables, their columns and what each means, and the
  schema version (``docs/dataset.md`` is written from it).
* :mod:`~psdbench.publish.export`: ``psdbench export``: a store (or chosen runs) to a dataset folder,
  written whole.
* :mod:`~psdbench.publish.verify`: ``psdbench verify``: rows re-checked from their stored points.
* :mod:`~psdbench.publish.merge`: ``psdbench merge``: datasets of many machines as one, nothing lost.
* :mod:`~psdbench.publish.outside`: ``psdbench import``: benchopt's and asv's result files as rows
  labelled with their provenance (reported by the tool, verified by nobody).
* :mod:`~psdbench.publish.site`: ``psdbench site``: a static results site of datasets (the report's
  winners per setup, a page per solver, instance set and setup, the history across builds).
* :mod:`~psdbench.publish.read`: a dataset read back (pandas and pyarrow only: a reader needs no
  psdbench, see ``docs/dataset.md``).

This layer sits above the report, whose frame and rules it uses (the gap, the floor, the ranked gap,
the reference's kind and accuracy are the report's own, never restated), and below the command line.
"""
