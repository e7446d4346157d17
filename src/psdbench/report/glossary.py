"""The report's one glossary: every verdict rule of :mod:`psdbench.report.rules`, worded for a reader.

Kept beside the rules it words, apart from them, so the rules module holds only what decides a verdict.
"""

from __future__ import annotations

from .rules import DEFAULT_ALLOWANCE, LEVEL, MAX_SHIFT, MIN_SHIFT, STOP_PARAMS

__all__ = ["glossary"]


def glossary(default_allowance: float = DEFAULT_ALLOWANCE) -> list[tuple[str, str]]:
    """``(term, definition)`` of every rule above, for the report's one glossary."""
    return [
        ("gap", "s (objective - reference) / max(|reference|, 1) of a verified point, s = -1 when maximizing"),
        ("floor", "max(reference accuracy, verification allowance, repair allowance): the verification allowance is "
                  "the largest tolerance the cell's verification recorded "
                  f"({default_allowance:g} where it recorded none); the repair allowance, where the family repairs "
                  "points, how much worse the objective of its point repaired to exact feasibility is (relative): "
                  "how far the point may lie beyond the optimum"),
        ("known to", "a reference's accuracy, relative: the distance to its certified bound (an interval's width, a "
                     "one-sided bound's distance), else the spread of its agreeing solves, else the verification floor"),
        ("not resolved (n.r.)", "a target tighter than the set's resolution, the largest floor of its cells: no winner, "
                                "no SGM, no profile, no reached count"),
        ("unit", "an independent replicate: an instance or a fold; a seed only where it changes the result (seeds "
                 "nested in a fold, or with identical results, are one unit, their mean its value)"),
        ("better / within the spread / does not hold",
         f"a claim read from the {100 * LEVEL:g} % Student-t interval of the mean paired difference over the units "
         "(a ratio: of the mean log ratio): all of it satisfies the claim / it straddles the threshold / none does; "
         "the winners by a declared metric and the findings alike"),
        ("uncontested", "a set with one configuration: no runner-up to compare"),
        ("ranked gap (`ranked_gap` in results.csv)",
         "the gap where >= 0; 0 (tie at 0) below the reference by at most the floor; empty below it by more "
         "(beyond the bound) or without a verified point"),
        ("reached", "a verified point whose ranked gap is at most the target; a cell reaches it at the first such "
                    "point of its curve"),
        ("beyond the bound", "below a certified bound (one- or two-sided) by more than the floor: marked, never "
                             "reached"),
        ("best-verified reference", "the reference solve's point or a verified cell's: never moved by a point within "
                                    "the floor of it; a point better than a more accurate one by more than the floor is "
                                    "set aside and listed"),
        ("SGM", "exp(mean log(t + shift)) - shift over one instance set, a target not reached charged at the "
                "cell's recorded time limit; shift: the median over the set's instances of the fastest time, "
                f"in [{MIN_SHIFT:g}, {MAX_SHIFT:g}] s"),
        ("configured for t", "a configuration whose own stopping tolerance t (its first parameter among "
                             + ", ".join(STOP_PARAMS) + ") is looser than the verification allowance: its "
                             "rejected points asked for less, they are not a failure of the method"),
        ("margin", "geometric mean over the set's units of runner-up time / winner time [min-max], units both "
                   "failed left out (and counted); a tie only with evidence: a unit on which the runner-up reached "
                   "the target at least as fast"),
        ("won on reached count / won on SGM", "a winner whose margin is below 1: the runner-up is faster on the units "
                                               "either reached, and the winner has the smaller SGM because it reached "
                                               "more units (or, with equal counts, by the shift and the limits); both "
                                               "are shown, never a tie"),
    ]
