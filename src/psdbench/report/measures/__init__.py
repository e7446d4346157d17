"""Pure computations on the tidy frame that the report's sections share (no rendering, no verdict
rule: those are :mod:`psdbench.report.rules`, which these call).

* :mod:`~psdbench.report.measures.gap`: the gap of a point to its reference, stated once.
* :mod:`~psdbench.report.measures.references`: each instance's reference kind and accuracy.
* :mod:`~psdbench.report.measures.units`: comparable instance sets and the independent units a
  comparison counts.
* :mod:`~psdbench.report.measures.analysis`: times to a tolerance, reach tables, paired comparisons.
* :mod:`~psdbench.report.measures.aggregate`: aggregations over ``ok`` cells, per instance.
* :mod:`~psdbench.report.measures.curves`: best-gap step functions and their bands.
* :mod:`~psdbench.report.measures.profiles`: Dolan-More performance profiles.
"""
