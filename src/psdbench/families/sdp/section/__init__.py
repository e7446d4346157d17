"""The SDP family's report section, in the form of Mittelmann's benchmark pages.

* :mod:`~psdbench.families.sdp.section.report`: the section (registered in ``psdbench.reports``).
* :mod:`~psdbench.families.sdp.section.judges`: when a cell counts as solved, what a failure is charged.
* :mod:`~psdbench.families.sdp.section.progress`: the progress chart, and what each cell says about itself.
* :mod:`~psdbench.families.sdp.section.settings`: what ran (sizes, tolerances, settings).
"""
