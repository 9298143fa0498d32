"""`dpone --help` lists every command without importing it: the listing comes from the command
table of :mod:`dpone.cli.main`, and a command's module is imported only when it runs or its own
help is asked for. These tests keep the table equal to the commands and the start light."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from dpone.cli._lazy import LazyCommand, LazyGroup
from dpone.cli.admin import admin
from dpone.cli.main import ADMIN_COMMANDS, COMMANDS, DELIVERY_COMMANDS, cli, delivery
from dpone.cli.plan import DIFF_SUMMARY, plan
from support.common import ROOT

# What a command listing or a read-only command never needs: the compiler's YAML and schema
# libraries, the grammar, the sealer's Arrow, the transport, the optional drivers.
HEAVY = ("ruamel", "yaml", "jsonschema", "lark", "pyarrow", "httpx", "psycopg", "boto3")


def _loaded_in_fresh_process(*argv: str) -> dict[str, list[str]]:
    """Run `dpone ARGV` in a new interpreter; the heavy libraries and dpone modules it loaded."""
    probe = (
        "import json, sys\n"
        f"sys.argv = ['dpone', *{list(argv)!r}]\n"
        "from dpone.cli.main import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "finally:\n"
        "    top = {name.split('.')[0] for name in sys.modules}\n"
        f"    heavy = sorted(top & set({HEAVY!r}))\n"
        "    dpone = sorted(name for name in sys.modules if name.startswith('dpone.'))\n"
        "    print(json.dumps({'heavy': heavy, 'dpone': dpone}), file=sys.stderr)\n"
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    loaded: dict[str, list[str]] = json.loads(ran.stderr.strip().splitlines()[-1])
    return loaded


def test_the_table_lists_every_command_of_both_lazy_groups() -> None:
    assert {name for name, _, _ in COMMANDS} | {"delivery"} == set(cli.commands)
    assert {name for name, _, _ in DELIVERY_COMMANDS} == set(delivery.commands)
    assert {name for name, _, _ in ADMIN_COMMANDS} | {"gate"} == set(admin.commands)


PLAN_COMMANDS = (("diff", "dpone.cli.plan_diff:diff", DIFF_SUMMARY),)


@pytest.mark.parametrize(("group", "table"), [(cli, COMMANDS), (delivery, DELIVERY_COMMANDS),
                                              (admin, ADMIN_COMMANDS), (plan, PLAN_COMMANDS)],
                         ids=["dpone", "delivery", "admin", "plan"])
def test_every_summary_gives_the_short_help_of_its_command(
        group: LazyGroup, table: tuple[tuple[str, str, str], ...]) -> None:
    for name, target, summary in table:
        stand_in = LazyCommand(name, target, summary)
        command = stand_in.load()
        assert command.name == name
        assert not command.hidden and not command.deprecated and command.short_help is None
        for limit in range(200):
            assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), \
                f"{name}: the summary in dpone.cli.main is not the first paragraph of its help"


@pytest.mark.parametrize("argv", [["--help"], ["delivery", "--help"]])
def test_a_listing_from_the_table_is_the_listing_of_the_loaded_commands(argv: list[str]) -> None:
    """The same `--help` text at several widths, rendered from the stand-ins (a fresh process)
    and after every command was imported."""
    render = (
        "import sys, click\n"
        "from click.testing import CliRunner\n"
        "from dpone.cli.main import cli\n"
        "if sys.argv[1] == 'loaded':\n"
        "    for group in (cli, cli.get_command(click.Context(cli), 'delivery')):\n"
        "        for name in group.list_commands(click.Context(group)):\n"
        "            group.get_command(click.Context(group), name)\n"
        "for width in (40, 60, 80, 120, 200):\n"
        f"    print(CliRunner().invoke(cli, {argv!r}, prog_name='dpone',\n"
        "                             terminal_width=width).output)\n"
    )
    texts = [subprocess.run([sys.executable, "-c", render, mode], capture_output=True,
                            text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            check=True).stdout
             for mode in ("stand-ins", "loaded")]
    assert "Commands:" in texts[0]
    assert texts[0] == texts[1]


def test_an_unknown_command_still_suggests_the_lazy_ones() -> None:
    result = CliRunner().invoke(cli, ["delivr"], prog_name="dpone")
    assert result.exit_code == 2
    assert "'deliver'" in result.output and "'delivery'" in result.output


def test_help_imports_no_command_module_and_no_runtime_library() -> None:
    loaded = _loaded_in_fresh_process("--help")
    assert loaded["heavy"] == []
    commands = {target.partition(":")[0] for _, target, _ in COMMANDS + DELIVERY_COMMANDS}
    assert not commands & set(loaded["dpone"])
    assert not [name for name in loaded["dpone"]
                if name.startswith(("dpone.compiler", "dpone.executor", "dpone.journal"))]


def test_admin_help_lists_the_revocation_commands_without_importing_them() -> None:
    loaded = _loaded_in_fresh_process("admin", "--help")
    assert "dpone.cli.admin" in loaded["dpone"]
    assert "dpone.cli.admin_revoke" not in loaded["dpone"]
    assert loaded["heavy"] == []


def test_a_subcommand_help_imports_only_that_command() -> None:
    loaded = _loaded_in_fresh_process("delivery", "list", "--help")
    assert "dpone.cli.delivery.delivery_list" in loaded["dpone"]
    assert "dpone.cli.delivery.inspect" not in loaded["dpone"]
    assert "dpone.cli.compile" not in loaded["dpone"]
