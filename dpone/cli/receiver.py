"""`dpone receiver serve`: the certified local mock receiver on loopback."""

from __future__ import annotations

import click


@click.group(name="receiver")
def receiver() -> None:
    """The local mock receiver used by the tutorial, the demo and the tests."""


@receiver.command(name="serve")
@click.option("--port", type=int, default=8765, show_default=True, help="Loopback port.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Loopback address only (127.0.0.1, ::1 or localhost).")
@click.option("--token-env", default="DPONE_CONN_MOCK_MEASUREMENTS_TOKEN", show_default=True,
              help="Environment variable holding the bearer token the receiver requires.")
@click.option("--processing-seconds", type=float, default=1.0, show_default=True,
              help="How long an async job takes from submit to complete.")
@click.option("--forget-keys-after", type=float, default=None, metavar="SECONDS",
              help="Variant: forget a job's key (its filename) that long after the job was "
                   "created; the same file is then a new job.")
@click.option("--rebind-keys", is_flag=True, default=False,
              help="Variant: take a key submitted again with other bytes as a new job.")
@click.option("--receipt-ttl", type=float, default=None, metavar="SECONDS",
              help="Variant: a job's receipt answers 410 once the job is that old.")
def serve_command(port: int, host: str, token_env: str, processing_seconds: float,
                  forget_keys_after: float | None, rebind_keys: bool,
                  receipt_ttl: float | None) -> None:
    """Serve the sync NDJSON batch and async dataset-job endpoints until interrupted.

    The variant options make the receiver contradict what the async example profile claims,
    to see `dpone profile certify` fail the matching case; without them it behaves as
    certified."""
    try:
        # starlette and uvicorn belong to the optional `receiver` extra: import on use only.
        from dpone.receiver import ReceiverSetupError, serve  # noqa: PLC0415
    except ImportError as missing:
        raise click.ClickException(
            f"the mock receiver needs the receiver extra: pip install 'dpone[receiver]' ({missing})"
        ) from None
    try:
        serve(port=port, host=host, token_env=token_env, processing_seconds=processing_seconds,
              forget_keys_after=forget_keys_after, rebind_keys=rebind_keys,
              receipt_ttl=receipt_ttl)
    except ReceiverSetupError as error:
        raise click.UsageError(str(error)) from None
