"""Secret and Credential never show, pickle or serialize their values."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from dpone.executor.transport import Credential, Secret
from support.transport import SENTINEL


def test_secret_reveals_only_on_request() -> None:
    secret = Secret(SENTINEL)
    assert secret.reveal() == SENTINEL
    for shown in (repr(secret), str(secret), f"{secret}", f"{secret!r}", f"{secret:>40}",
                  "%s" % (secret,),  # noqa: UP031
                  repr([secret]), repr({"k": secret})):
        assert SENTINEL not in shown
        assert "Secret(***)" in shown


@pytest.mark.parametrize("value", [Secret(SENTINEL), Credential("bearer", {"token": Secret(SENTINEL)})])
def test_pickle_and_json_refuse(value: object) -> None:
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        with pytest.raises(TypeError) as caught:
            pickle.dumps(value, protocol=protocol)
        assert SENTINEL not in str(caught.value)
    with pytest.raises(TypeError) as caught:
        json.dumps({"credential": value})
    assert SENTINEL not in str(caught.value)


def test_secret_is_immutable_unhashable_and_compares_by_value() -> None:
    secret = Secret(SENTINEL)
    with pytest.raises(AttributeError):
        secret._value = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        hash(secret)
    assert secret == Secret(SENTINEL)
    assert secret != Secret("other")
    assert copy.copy(secret) is secret
    assert copy.deepcopy({"s": secret})["s"] is secret
    with pytest.raises(TypeError):
        Secret(123)  # type: ignore[arg-type]


def test_credential_shows_field_names_not_values() -> None:
    credential = Credential("basic", {"username": Secret("u-" + SENTINEL),
                                      "password": Secret(SENTINEL)})
    assert SENTINEL not in repr(credential)
    assert SENTINEL not in str(credential)
    assert credential.field_names == ("password", "username")
    assert credential.secret("password").reveal() == SENTINEL
    assert credential.provider == "basic"
    with pytest.raises(KeyError):
        credential.secret("token")
