"""A toy psdbench family: the nearest unit-diagonal PSD matrix ("nearest correlation matrix").

Everything psdbench needs is registered through entry points in ``pyproject.toml``:

===========================  =================================================================
``toy/nearest-psd``          the problem (:mod:`.problem`), kind and family ``toy-psd``; its kind
                             protocol is :mod:`.contract`
``toy/noisy-corr``           the dataset (:mod:`.data`): generator settings in ``payload``
``toy-altproj``              a solver (:mod:`.altproj`): alternating projections with Dykstra's
                             correction (Higham 2002)
``toy-nearest-psd``          a report section (:mod:`.report`)
``toy-suite``                a suite (``suites/toy-suite.toml``)
===========================  =================================================================
"""

KIND = "toy-psd"
