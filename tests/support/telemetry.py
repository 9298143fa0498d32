"""Read the process's Prometheus registry in tests: samples by name and labels, deltas between
two reads, and the labels whose values are not in the catalogue's bounded sets."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from prometheus_client import CollectorRegistry

from dpone.contracts.metrics import BY_NAME
from dpone.observability.metrics import REGISTRY

Key = tuple[str, tuple[tuple[str, str], ...]]
Samples = dict[Key, float]
SUFFIXES: Final = ("_total", "_bucket", "_sum", "_count", "_created")


def samples(registry: CollectorRegistry = REGISTRY) -> Samples:
    """Every sample of ``registry``: (sample name, sorted labels) -> value (``_created``
    timestamps left out)."""
    found: Samples = {}
    for family in registry.collect():
        for sample in family.samples:
            if sample.name.endswith("_created"):
                continue
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def total(read: Samples, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(value for (sample, pairs), value in read.items()
               if sample == name and wanted <= set(pairs))


def delta(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return total(after, name, **labels) - total(before, name, **labels)


def catalogue_name(sample: str) -> str | None:
    """The catalogue metric a sample belongs to (``None``: not in the catalogue)."""
    if sample in BY_NAME:
        return sample
    for suffix in SUFFIXES:
        base = sample.removesuffix(suffix)
        if base != sample and (base in BY_NAME or base + "_total" in BY_NAME):
            return base if base in BY_NAME else base + "_total"
    return None


def unbounded(read: Iterable[Key], identifiers: Iterable[str] = ()) -> list[str]:
    """Every label of ``read`` that is not the catalogue's (a metric outside the catalogue, a
    label name it does not declare, a value outside the label's set) or whose value is one of
    ``identifiers`` (the run's operation ids, digests, ...)."""
    ids = set(identifiers)
    problems = []
    for sample, pairs in read:
        name = catalogue_name(sample)
        if name is None:
            problems.append(f"{sample}: not a metric of the catalogue")
            continue
        declared = {label.name: label for label in BY_NAME[name].labels}
        for label, value in pairs:
            if label == "le" and sample.endswith("_bucket"):
                continue
            spec = declared.get(label)
            if spec is None:
                problems.append(f"{sample}: label {label} is not declared")
            elif not spec.admits(value) or value in ids:
                problems.append(f"{sample}: {label}={value!r} is not a bounded value")
    return problems


def assert_catalogued(name: str, labels: Mapping[str, str], source: str) -> None:
    """``name`` is a ``source`` metric of the catalogue, the series has exactly its label names,
    and every value is one its label admits."""
    metric = BY_NAME.get(name)
    assert metric is not None, f"{name} is not in the metrics catalogue"
    assert metric.source == source, name
    assert set(labels) == set(metric.label_names), (name, labels)
    for label in metric.labels:
        assert label.admits(labels[label.name]), (name, label.name, labels[label.name])


def label_values(read: Mapping[Key, float], label: str) -> set[str]:
    return {value for _name, pairs in read for name, value in pairs if name == label}
