"""Mutation fence rules: a fence's fields say where its key travels, and the request must agree.

A fence holds only when the request it fences carries the child's ``receiver_mutation_key``
where the fence says. ``receiver_duplicate_key``: in the payload filename of a
``multipart_file`` body (``location: payload_filename``, ``value_from:
receiver_mutation_key``, no ``header_name``). ``idempotency_key_header``: in a request header
(``location: header``, ``value_from: receiver_mutation_key``) named ``header_name`` that
``request.headers`` renders from exactly ``{receiver_mutation_key}``. ``none``: no key travels,
so none of ``location``, ``value_from``, ``header_name`` is given. A fence of another type
certified in any environment binds the key to the payload (``key_payload_binding: required``),
or it is ``profile.fence_not_payload_bound``. Any contradiction is
``profile.fence_inconsistent`` at the contradicting field (a header that is missing or rendered
from something else is ``profile.fence_header_not_rendered``).
"""

from __future__ import annotations

from typing import Final

from dpone.compiler._located import located_error
from dpone.compiler._yaml import LoadedDocument, YamlPath
from dpone.contracts import DponeError
from dpone.contracts.profile import MutationFence, OperationProfile

_KEY: Final = "receiver_mutation_key"
_WHERE: Final[dict[str, str | None]] = {
    "none": None, "receiver_duplicate_key": "payload_filename", "idempotency_key_header": "header"}
_FENCE: Final[YamlPath] = ("mutation_fence",)


def check_fence(profile: OperationProfile, doc: LoadedDocument) -> None:
    """Refuse a fence whose fields contradict each other or the request they fence."""
    fence = profile.mutation_fence
    expected = _WHERE[fence.type]
    if fence.type == "none":
        for name in ("location", "value_from", "header_name"):
            if getattr(fence, name) is not None:
                raise _inconsistent(doc, name, f"a fence of type none carries no key, but "
                                    f"{name} is {getattr(fence, name)!r}",
                                    f"remove mutation_fence.{name}, or name the fence type")
        return
    if fence.location != expected:
        raise _inconsistent(doc, "location", f"a fence of type {fence.type} carries the key in "
                            f"location {expected}, but location is {fence.location!r}",
                            f"set mutation_fence.location to {expected}")
    if fence.value_from != _KEY:
        raise _inconsistent(doc, "value_from", f"a fence of type {fence.type} is valued from the "
                            f"child's receiver mutation key, but value_from is "
                            f"{fence.value_from!r}", f"set mutation_fence.value_from to {_KEY}")
    if fence.type == "receiver_duplicate_key":
        _check_duplicate_key(profile, fence, doc)
    else:
        _check_fence_header(profile, doc)
    _check_payload_binding(fence, doc)


def _check_payload_binding(fence: MutationFence, doc: LoadedDocument) -> None:
    """A fence certified to authorize a same-key replay binds the key to the payload.

    A receiver that does not compare the payload under a known key answers "duplicate" for
    another payload too: a replay (or a duplicate answer) would then prove nothing about this
    child's bytes. So ``certified_environments`` needs ``key_payload_binding: required``; a
    fence certified nowhere may say ``not_required`` (it never authorizes a replay).
    """
    if not fence.certified_environments or fence.key_payload_binding == "required":
        return
    where: YamlPath = ((*_FENCE, "key_payload_binding") if fence.key_payload_binding is not None
                       else (*_FENCE, "certified_environments"))
    shown = fence.key_payload_binding or "not given"
    raise located_error(
        "profile.fence_not_payload_bound", f"the fence is certified in "
        f"{list(fence.certified_environments)} to authorize same-key replays, but "
        f"key_payload_binding is {shown}: a receiver that does not bind the key to the payload "
        "answers duplicate for other bytes too", doc, where,
        hint="set mutation_fence.key_payload_binding: required (certified), or remove "
             "certified_environments")


def _inconsistent(doc: LoadedDocument, field: str, message: str, hint: str,
                  path: YamlPath | None = None) -> DponeError:
    return located_error("profile.fence_inconsistent", message, doc,
                         path or (*_FENCE, field), hint=hint)


def _check_duplicate_key(profile: OperationProfile, fence: MutationFence,
                         doc: LoadedDocument) -> None:
    if fence.header_name is not None:
        raise _inconsistent(doc, "header_name", "a receiver_duplicate_key fence carries the key "
                            f"in the payload filename, not in the header {fence.header_name!r}",
                            "remove mutation_fence.header_name, or use type "
                            "idempotency_key_header")
    if profile.request.body.type != "multipart_file":
        raise _inconsistent(doc, "type", "a receiver_duplicate_key fence sits in the payload "
                            "filename of a multipart_file body, but the request body is "
                            f"{profile.request.body.type!r}",
                            "use a multipart_file body, or another fence type",
                            path=("request", "body", "type"))


def _check_fence_header(profile: OperationProfile, doc: LoadedDocument) -> None:
    """An idempotency-key fence holds only when its header carries the child's key: the request
    template must render ``header_name`` from exactly ``{receiver_mutation_key}``."""
    name = profile.mutation_fence.header_name
    if name is None:
        raise located_error("schema.missing_field", "idempotency_key_header needs header_name",
                            doc, (*_FENCE, "header_name"))
    expected = "{" + _KEY + "}"
    rendered = {k: v for k, v in profile.request.headers.items() if k.lower() == name.lower()}
    if not rendered:
        raise located_error(
            "profile.fence_header_not_rendered", f"the fence header {name!r} is not in "
            "request.headers: a replay would go out without the key that fences it", doc,
            (*_FENCE, "header_name"), hint=f"add `{name}: \"{expected}\"` under request.headers")
    header, template = next(iter(rendered.items()))
    if template != expected:
        raise located_error(
            "profile.fence_header_not_rendered", f"the fence header {name!r} is rendered from "
            f"{template!r}, not from the child's receiver mutation key", doc,
            ("request", "headers", header),
            hint=f"set request.headers.{header} to exactly \"{expected}\"")
