"""The one builder of printed next commands: non-default locators, shell quoting, no secret."""

from __future__ import annotations

import shlex

import pytest

from dpone.cli._hints import Locators, command, inspect_command, redact, resume_command

OP = "op_v1_" + "a" * 64


def test_defaults_add_no_option() -> None:
    assert resume_command(OP, Locators()) == f"dpone delivery resume --operation-id {OP} --apply"
    assert inspect_command(OP, Locators.given(plans=".dpone", journal=".dpone/journal.sqlite3")) \
        == f"dpone delivery inspect --operation-id {OP}"


def test_every_non_default_locator_is_carried_and_quoted() -> None:
    locators = Locators.given(environment="prod-eu", journal="/srv/my journal.sqlite3",
                              artifacts="s3://bucket/pre fix", plans="/srv/plans")

    resume = shlex.split(resume_command(OP, locators, wait=True))
    inspect = shlex.split(inspect_command(OP, locators))

    assert resume == ["dpone", "delivery", "resume", "--operation-id", OP,
                      "--environment", "prod-eu", "--journal", "/srv/my journal.sqlite3",
                      "--artifacts", "s3://bucket/pre fix", "--plans", "/srv/plans",
                      "--apply", "--wait"]
    assert inspect == ["dpone", "delivery", "inspect", "--operation-id", OP,
                       "--environment", "prod-eu", "--journal", "/srv/my journal.sqlite3",
                       "--artifacts", "s3://bucket/pre fix", "--plans", "/srv/plans"]


def test_an_environment_file_replaces_the_locators_it_supplies() -> None:
    supplied = Locators("local-dev", "postgresql://db/journal", "s3://bucket/prefix", "/srv/plans",
                        supplied=frozenset({"journal", "artifacts"}), environment_file=True)
    through_registry = Locators("prod", "/srv/j.sqlite3", "s3://b/p", ".dpone",
                                registry="/srv/registry",
                                supplied=frozenset({"journal", "artifacts"}),
                                environment_file=True)

    assert shlex.split(resume_command(OP, supplied)) == [
        "dpone", "delivery", "resume", "--operation-id", OP, "--environment", "local-dev",
        "--plans", "/srv/plans", "--apply"]
    assert shlex.split(inspect_command(OP, through_registry)) == [
        "dpone", "delivery", "inspect", "--operation-id", OP, "--environment", "prod",
        "--registry", "/srv/registry"]


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://dpone:s3cr%40t@db.internal:5432/journal?sslmode=require",
     "postgresql://dpone:***@db.internal:5432/journal?sslmode=require"),
    ("postgres://db/journal?user=dpone&password=s3cret&sslpassword=k3y",
     "postgres://db/journal?user=dpone&password=***&sslpassword=***"),
    ("postgresql://dpone@db/journal?options=-c%20search_path%3Dx",
     "postgresql://dpone@db/journal?options=-c%20search_path%3Dx"),
    ("/srv/dpone/journal.sqlite3", "/srv/dpone/journal.sqlite3"),
])
def test_a_url_password_is_never_printed(url: str, shown: str) -> None:
    assert redact(url) == shown
    printed = resume_command(OP, Locators.given(journal=url))
    assert "s3cr" not in printed and "k3y" not in printed
    assert shlex.split(printed)[6] == shown


def test_command_quotes_every_word() -> None:
    assert shlex.split(command("plan", "it's here.yaml", "--registry", "a b")) == [
        "dpone", "plan", "it's here.yaml", "--registry", "a b"]
