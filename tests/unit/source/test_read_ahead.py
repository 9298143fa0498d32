"""Source batches are parsed ahead of the freeze on a thread of their own: same items, same
order, an error where its item would have been, and nothing taken after the consumer stops."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from dpone.executor.source._ahead import read_ahead


def test_items_arrive_in_order_and_all_of_them() -> None:
    assert list(read_ahead(iter(range(1000)))) == list(range(1000))
    assert list(read_ahead(iter([]))) == []


def test_the_next_item_is_taken_while_the_consumer_works_on_this_one() -> None:
    asked = threading.Event()

    def source() -> Iterator[int]:
        yield 1
        asked.set()  # the second item is being produced
        yield 2

    items = read_ahead(source())
    assert next(items) == 1
    assert asked.wait(10), "the reader waited for the consumer before parsing on"
    assert list(items) == [2]


def test_an_error_comes_after_the_items_before_it() -> None:
    def source() -> Iterator[int]:
        yield 1
        yield 2
        raise ValueError("straddling object")

    items = read_ahead(source())
    assert [next(items), next(items)] == [1, 2]
    with pytest.raises(ValueError, match="straddling object"):
        next(items)


def test_a_consumer_that_stops_early_stops_the_reader() -> None:
    taken: list[int] = []

    def source() -> Iterator[int]:
        for item in range(10_000):
            taken.append(item)
            yield item

    items = read_ahead(source(), depth=2)
    assert next(items) == 0
    items.close()  # joins the reading thread
    assert len(taken) <= 4  # the item held, the queue's two, one waiting to be offered


def test_depth_zero_makes_the_next_item_while_this_one_is_used_and_no_further() -> None:
    """The freeze's sorted groups: one appended, the next sorted meanwhile, none beyond."""
    made: list[int] = []
    second = threading.Event()

    def source() -> Iterator[int]:
        for item in range(5):
            made.append(item)
            if item == 1:
                second.set()
            yield item

    items = read_ahead(source(), depth=0)
    assert next(items) == 0
    assert second.wait(10)  # item 1 is made while item 0 is in use
    time.sleep(0.2)  # a reader running ahead would make item 2 meanwhile
    assert made == [0, 1]
    assert list(items) == [1, 2, 3, 4]
