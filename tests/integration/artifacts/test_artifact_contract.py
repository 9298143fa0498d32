"""One contract suite for every ImmutableArtifactPort adapter: the local directory and S3."""

from __future__ import annotations

import hashlib
import random
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from dpone.contracts import DponeError, content_digest
from dpone.contracts.ports import ArtifactRef
from support.artifacts import StoreHarness

MIB = 1 << 20
WRITERS = 8
SMALL_PARTS = {"multipart_threshold": 5 * MIB, "part_size": 5 * MIB}  # S3's smallest parts


def chunks(seed: int, count: int, size: int = MIB) -> Iterator[bytes]:
    """``count`` deterministic pseudo-random chunks, produced one at a time."""
    for index in range(count):
        yield random.Random(seed * 100_003 + index).randbytes(size)


def expected(seed: int, count: int, size: int = MIB) -> ArtifactRef:
    hasher = hashlib.sha256()
    for chunk in chunks(seed, count, size):
        hasher.update(chunk)
    return ArtifactRef(key="", digest="sha256:" + hasher.hexdigest(), size=count * size)


def stream_digest(stream: Iterator[bytes]) -> tuple[str, int]:
    hasher = hashlib.sha256()
    size = 0
    for chunk in stream:
        hasher.update(chunk)
        size += len(chunk)
    return "sha256:" + hasher.hexdigest(), size


def raises_code(code: str, call: Callable[[], Any]) -> DponeError:
    with pytest.raises(DponeError) as caught:
        call()
    assert caught.value.code == code, caught.value
    return caught.value


# -- round trips ------------------------------------------------------------------------------


def test_round_trip_bytes(harness: StoreHarness) -> None:
    store = harness.make()
    data = b'{"schema":"dpone.rest_payload.v1","rows":3}'
    ref = store.put_bytes("payloads/op-1/child-0001.json", data)
    assert ref == ArtifactRef(key="payloads/op-1/child-0001.json", digest=content_digest(data),
                              size=len(data))
    assert store.get_bytes(ref.key) == data
    assert b"".join(store.open_stream(ref.key, chunk_size=7)) == data
    assert store.stat(ref.key) == ref
    assert harness.stored_names() == [ref.key]


def test_empty_artifact_round_trips(harness: StoreHarness) -> None:
    store = harness.make()
    ref = store.put_stream("empty", iter(()))
    assert ref == ArtifactRef(key="empty", digest=content_digest(b""), size=0)
    assert store.get_bytes("empty") == b""
    assert list(store.open_stream("empty")) == []
    assert store.stat("empty") == ref
    assert store.put_bytes("empty", b"") == ref


@pytest.mark.parametrize("key", ["a", "a/.hidden", "k=v/x@2+y-z_w.json", "A" * 255,
                                 "/".join(["s" * 9] * 100)])
def test_every_valid_key_shape_round_trips(harness: StoreHarness, key: str) -> None:
    store = harness.make()
    assert store.put_bytes(key, b"x").key == key
    assert store.get_bytes(key) == b"x"


def test_streamed_write_crosses_the_multipart_threshold(harness: StoreHarness) -> None:
    store = harness.make()  # 8 MiB threshold and parts: 20 MiB become three parts on S3
    want = expected(seed=1, count=20)
    ref = store.put_stream("parents/p.arrow", chunks(seed=1, count=20))
    assert ref == want.model_copy(update={"key": "parents/p.arrow"})
    assert stream_digest(store.open_stream(ref.key)) == (want.digest, want.size)
    assert stream_digest(store.open_stream(ref.key, chunk_size=3 * MIB + 1)) == (want.digest,
                                                                                   want.size)
    assert store.stat(ref.key) == ref
    assert harness.leftovers() == []
    if harness.bucket is not None:
        head = harness.bucket.client.head_object(Bucket=harness.bucket.name,
                                                 Key="contract/parents/p.arrow")
        assert head["ETag"].strip('"').endswith("-3")  # really a three-part upload


def test_a_stream_is_never_held_whole(harness: StoreHarness) -> None:
    store = harness.make(**SMALL_PARTS)
    tracemalloc.start()
    try:
        ref = store.put_stream("big", chunks(seed=2, count=32))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ref.size == 32 * MIB
    assert peak < 20 * MIB, f"peak traced memory {peak / MIB:.1f} MiB for a 32 MiB stream"


def test_an_open_stream_can_be_closed_early(harness: StoreHarness) -> None:
    store = harness.make()
    store.put_bytes("k", b"abcdef")
    stream = store.open_stream("k", chunk_size=2)
    assert next(stream) == b"ab"
    stream.close()  # type: ignore[attr-defined]
    assert list(stream) == []


# -- create-if-absent -------------------------------------------------------------------------


def test_same_key_same_bytes_is_a_no_op(harness: StoreHarness) -> None:
    store = harness.make()
    first = store.put_bytes("markers/ns/op/1", b"may-attempt")
    assert store.put_bytes("markers/ns/op/1", b"may-attempt") == first
    assert store.put_stream("markers/ns/op/1", iter([b"may-", b"attempt"])) == first
    assert harness.make().put_bytes("markers/ns/op/1", b"may-attempt") == first
    assert harness.stored_names() == ["markers/ns/op/1"]


def test_same_key_other_bytes_is_a_conflict_and_keeps_the_original(harness: StoreHarness) -> None:
    store = harness.make()
    original = store.put_bytes("markers/ns/op/1", b"attempt 1 of intent A")
    error = raises_code("artifact.conflict",
                        lambda: store.put_bytes("markers/ns/op/1", b"attempt 1 of intent B"))
    offered = content_digest(b"attempt 1 of intent B")
    assert "markers/ns/op/1" in str(error)
    assert original.digest in str(error) and offered in str(error)
    assert error.details == {"key": "markers/ns/op/1", "existing_digest": original.digest,
                             "offered_digest": offered}
    raises_code("artifact.conflict",
                lambda: store.put_stream("markers/ns/op/1", iter([b"attempt 1 ", b"of intent A!"])))
    assert store.get_bytes("markers/ns/op/1") == b"attempt 1 of intent A"
    assert store.stat("markers/ns/op/1") == original


def test_streamed_write_over_an_existing_key_with_other_bytes(harness: StoreHarness) -> None:
    store = harness.make(**SMALL_PARTS)
    original = store.put_stream("parents/p.arrow", chunks(seed=3, count=8))
    raises_code("artifact.conflict",
                lambda: store.put_stream("parents/p.arrow", chunks(seed=4, count=8)))
    assert stream_digest(store.open_stream("parents/p.arrow")) == (original.digest, original.size)
    assert store.put_stream("parents/p.arrow", chunks(seed=3, count=8)) == original
    assert harness.leftovers() == []


def _racing_stream(seed: int, count: int, when: int, race: Callable[[], object]) -> Iterator[bytes]:
    """The chunks of ``seed``; after ``when`` of them, another writer publishes the key."""
    for index, chunk in enumerate(chunks(seed, count)):
        if index == when:
            race()
        yield chunk


def test_other_bytes_landing_mid_stream_win_and_the_stream_conflicts(
        harness: StoreHarness) -> None:
    store, rival = harness.make(**SMALL_PARTS), harness.make(**SMALL_PARTS)
    # The rival publishes once our multipart upload is under way (its first part is sent).
    stream = _racing_stream(5, 8, when=7, race=lambda: rival.put_bytes("parents/p", b"rival"))
    error = raises_code("artifact.conflict", lambda: store.put_stream("parents/p", stream))
    assert error.details["existing_digest"] == content_digest(b"rival")
    assert store.get_bytes("parents/p") == b"rival"
    assert harness.leftovers() == []


def test_same_bytes_landing_mid_stream_make_the_stream_a_no_op(harness: StoreHarness) -> None:
    store, rival = harness.make(**SMALL_PARTS), harness.make(**SMALL_PARTS)
    stream = _racing_stream(6, 8, when=7,
                            race=lambda: rival.put_stream("parents/p", chunks(seed=6, count=8)))
    ref = store.put_stream("parents/p", stream)
    assert ref == expected(seed=6, count=8).model_copy(update={"key": "parents/p"})
    assert store.stat("parents/p") == ref
    assert harness.leftovers() == []
    assert harness.stored_names() == ["parents/p"]


# -- absence and refusals ---------------------------------------------------------------------


def test_a_missing_key(harness: StoreHarness) -> None:
    store = harness.make()
    assert store.stat("nothing/here") is None
    raises_code("artifact.not_found", lambda: store.get_bytes("nothing/here"))
    raises_code("artifact.not_found", lambda: store.open_stream("nothing/here"))
    store.put_bytes("nothing/else", b"x")
    assert store.stat("nothing") is None
    raises_code("artifact.not_found", lambda: store.get_bytes("nothing"))


INVALID_KEYS = ["", "/absolute", "trailing/", "a//b", ".", "..", "a/./b", "../escape", "a/..",
                "with space", "back\\slash", "query?x", "percent%2F", "colon:x", "tilde~x",
                "nul\x00x", "new\nline", "unicodé", "x" * 1025, "s" * 256]


def test_invalid_keys_are_refused(harness: StoreHarness) -> None:
    store = harness.make()
    operations: list[Callable[[str], object]] = [
        lambda key: store.put_bytes(key, b"x"),
        lambda key: store.put_stream(key, iter([b"x"])),
        store.get_bytes,
        store.open_stream,
        store.stat,
    ]
    for key in INVALID_KEYS:
        for operation in operations:
            with pytest.raises(DponeError) as caught:
                operation(key)
            assert caught.value.code == "artifact.invalid_key", (key, caught.value)
    assert harness.stored_names() == []


# -- concurrent writers -----------------------------------------------------------------------


def _race(write: Callable[[int], ArtifactRef]) -> list[ArtifactRef | DponeError]:
    """Run ``write(i)`` for WRITERS threads released together; collect refs or errors."""
    start = threading.Barrier(WRITERS)
    results: list[ArtifactRef | DponeError | None] = [None] * WRITERS

    def run(index: int) -> None:
        start.wait()
        try:
            results[index] = write(index)
        except DponeError as error:
            results[index] = error

    threads = [threading.Thread(target=run, args=(index,)) for index in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert all(result is not None for result in results)
    return [result for result in results if result is not None]


def test_concurrent_writers_of_the_same_bytes_all_succeed(harness: StoreHarness) -> None:
    store = harness.make()
    data = b"sealed payload " * 1000
    results = _race(lambda _: store.put_bytes("payloads/same", data))
    assert results == [ArtifactRef(key="payloads/same", digest=content_digest(data),
                                   size=len(data))] * WRITERS
    assert harness.stored_names() == ["payloads/same"]
    assert store.get_bytes("payloads/same") == data


def test_concurrent_writers_of_other_bytes_have_exactly_one_winner(
        harness: StoreHarness) -> None:
    store = harness.make()
    bodies = [f"writer {index} ".encode() * 1000 for index in range(WRITERS)]
    results = _race(lambda index: store.put_bytes("payloads/contested", bodies[index]))
    winners = [index for index, result in enumerate(results) if isinstance(result, ArtifactRef)]
    assert len(winners) == 1, results
    losers = [result for result in results if isinstance(result, DponeError)]
    assert {error.code for error in losers} == {"artifact.conflict"}
    assert store.get_bytes("payloads/contested") == bodies[winners[0]]
    assert harness.stored_names() == ["payloads/contested"]
    assert harness.leftovers() == []
