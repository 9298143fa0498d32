"""The receiver's own payload readers, directly: strict, bounded, null-preserving."""

from __future__ import annotations

import gzip

import pytest

from dpone.receiver import PayloadError
from dpone.receiver._multipart import parse_multipart
from dpone.receiver._readers import gunzip, read_csv, read_ndjson


def test_csv_keeps_null_and_empty_apart_and_unquotes() -> None:
    text = 'a,b,c\n,"",x\n"1,2","say ""hi""","two\nlines"\r\nп,,\n'
    assert read_csv(text.encode()) == [
        {"a": None, "b": "", "c": "x"},
        {"a": "1,2", "b": 'say "hi"', "c": "two\nlines"},
        {"a": "п", "b": None, "c": None},
    ]


def test_csv_without_final_newline_and_header_only() -> None:
    assert read_csv(b"a,b\n1,2") == [{"a": "1", "b": "2"}]
    assert read_csv(b"a,b\n") == []


@pytest.mark.parametrize("data", [
    b"", b"\xef\xbb\xbfa\n1\n", b"a,a\n1,2\n", b"a,\n1,2\n", b"a,b\n1\n", b'a\n"open\n',
    b'a\n"x"y\n', b'a\nx"y\n', b"a\n\xff\n",
])
def test_csv_refusals(data: bytes) -> None:
    with pytest.raises(PayloadError):
        read_csv(data)


def test_ndjson_rows_and_messages() -> None:
    assert read_ndjson(b"") == []
    assert read_ndjson('{"a": "ё", "b": null}\n'.encode()) == [{"a": "ё", "b": None}]
    with pytest.raises(PayloadError, match=r"^NDJSON line 2: Infinity is not JSON$"):
        read_ndjson(b'{"a": 1}\n{"a": Infinity}\n')
    with pytest.raises(PayloadError) as raised:
        read_ndjson(b'{"a": "' + b"x" * 10_000 + b'"')
    assert len(str(raised.value)) <= 200
    assert "xxx" not in str(raised.value)


def test_gunzip_members_truncation_and_bound() -> None:
    assert gunzip(gzip.compress(b"ab") + gzip.compress(b"cd"), 10) == b"abcd"
    with pytest.raises(PayloadError, match="truncated"):
        gunzip(gzip.compress(b"x" * 1000)[:-12], 10_000)
    with pytest.raises(PayloadError, match="more than"):
        gunzip(gzip.compress(b"0" * 1_000_000), 1000)
    with pytest.raises(PayloadError):
        gunzip(b"", 10)


def test_multipart_preamble_quoted_boundary_and_refusals() -> None:
    body = (b"preamble\r\n--b 1\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x y.gz\"\r\n"
            b"Content-Type: Application/Gzip\r\n\r\n\r\n--b 0\r\n--b 1--\r\nepilogue")
    (part,) = parse_multipart(body, 'multipart/form-data; boundary="b 1"')
    assert (part.name, part.filename, part.content_type, part.data) == ("f", "x y.gz", "application/gzip",
                                                                          b"\r\n--b 0")
    for content_type in ("text/plain; boundary=b", "multipart/form-data", "multipart/form-data; boundary="):
        with pytest.raises(PayloadError):
            parse_multipart(body, content_type)
    with pytest.raises(PayloadError):
        parse_multipart(b"--b\r\nContent-Disposition: attachment\r\n\r\nx\r\n--b--\r\n",
                        "multipart/form-data; boundary=b")
    many = b"".join(b'--b\r\nContent-Disposition: form-data; name="p"\r\n\r\nv\r\n' for _ in range(40))
    with pytest.raises(PayloadError, match="more than"):
        parse_multipart(many + b"--b--\r\n", "multipart/form-data; boundary=b")
