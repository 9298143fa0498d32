"""NO_COLOR (https://no-color.org): when it is set and not empty, nothing dpone prints is
coloured, even on a terminal; the mock receiver's log lines are plain too."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from dpone.cli.main import cli
from support.common import EXAMPLES

ESCAPE = "\x1b["


def _failing_check(env: dict[str, str | None]) -> str:
    # color=True: the runner behaves like a terminal, where click keeps ANSI styles
    result = CliRunner().invoke(cli, ["check", str(EXAMPLES / "workloads" / "missing.yaml"),
                                      "--registry", str(EXAMPLES)], color=True, env=env)
    assert result.exit_code == 2, result.stderr
    assert "input.not_found" in result.stderr
    return result.stderr


def test_errors_are_coloured_on_a_terminal_by_default() -> None:
    assert ESCAPE in _failing_check({"NO_COLOR": None})


@pytest.mark.parametrize("value", ["1", "true", "0"])
def test_no_color_strips_every_style(value: str) -> None:
    stderr = _failing_check({"NO_COLOR": value})
    assert ESCAPE not in stderr
    assert stderr.startswith("error: ")


def test_an_empty_no_color_is_ignored() -> None:
    assert ESCAPE in _failing_check({"NO_COLOR": ""})


def test_the_mock_receiver_logs_plainly_under_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    from dpone.receiver import server  # noqa: PLC0415 - the receiver extra is optional

    app = server.create_app(server.ReceiverConfig())
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert server._uvicorn_config(app, "127.0.0.1", 0, "info").use_colors is None
    monkeypatch.setenv("NO_COLOR", "1")
    assert server._uvicorn_config(app, "127.0.0.1", 0, "info").use_colors is False
