"""``maxcut-gen/<generator>``: seeded graphs of :mod:`.graph` (drawn per instance with its ``n``,
``density`` and seed); the SDPLIB maxG files come through the sdp family's ``sdplib/<name>``."""

from __future__ import annotations

from psdbench.api import DataError, Dataset

from .graph import GENERATORS


class MaxcutGenCollection:
    """Settings only; the instance draws its graph."""

    def names(self) -> list[str]:
        return list(GENERATORS)

    def check(self, name: str) -> None:
        if name not in GENERATORS:
            raise DataError(f"unknown dataset maxcut-gen/{name}; known: {', '.join(GENERATORS)}")

    def load(self, name: str) -> Dataset:
        self.check(name)
        return Dataset(name=f"maxcut-gen/{name}", source="psdbench.families.maxcut.graph",
                       payload={"generator": name})
