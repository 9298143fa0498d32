"""Throwaway PostgreSQL clusters for the test suites, built from the machine's server binaries.

``ThrowawayCluster(fsync=False)`` runs ``initdb`` (trust authentication, superuser ``postgres``,
UTF8, locale C) in a fresh temporary directory and starts the server on a free loopback port
with its socket in that directory. With ``synchronous_standby=True`` it also takes a base
backup, starts a streaming standby on a second port and makes it the primary's synchronous
standby, so a commit on the primary returns only once the standby has it.

PostgreSQL refuses to run as root: when the tests run as root, every server command runs as
the ``postgres`` user through ``runuser`` and the directory is chowned to it. The binaries are
found in ``$DPONE_PG_BINDIR``, else the newest ``/usr/lib/postgresql/<version>/bin``, else on
``PATH``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

from support.common import free_port
from support.sentinel_sweep import scan_tree

STANDBY_NAME = "dpone_standby"
_START_TIMEOUT = 60.0


def find_bindir() -> Path:
    """The directory holding initdb, pg_ctl and pg_isready."""
    configured = os.environ.get("DPONE_PG_BINDIR")
    if configured:
        return Path(configured)
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit()
                        else 0)
    if candidates:
        return candidates[-1].parent
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise RuntimeError("PostgreSQL server binaries not found: install postgresql-15 (Debian: "
                       "apt-get install postgresql-15) or set DPONE_PG_BINDIR")


class _Server:
    """One data directory and the postmaster running on it."""

    def __init__(self, cluster: ThrowawayCluster, name: str) -> None:
        self.cluster = cluster
        self.data = cluster.root / name
        self.log = cluster.root / f"{name}.log"
        self.port = 0
        self.running = False

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self, settings: dict[str, str]) -> None:
        for _attempt in range(3):
            self.port = free_port()
            options = {"port": str(self.port), "listen_addresses": "127.0.0.1",
                       "unix_socket_directories": str(self.cluster.root), **settings}
            opts = " ".join(f"-c {key}={value}" for key, value in options.items())
            result = self.cluster.run(["pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w",
                                       "-t", str(int(_START_TIMEOUT)), "-o", opts, "start"],
                                      check=False)
            if result.returncode == 0:
                self.running = True
                self.wait_ready()
                return
        raise RuntimeError(f"PostgreSQL did not start:\n{self.cluster.tail(self.log)}")

    def wait_ready(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT
        while time.monotonic() < deadline:
            ready = self.cluster.run(["pg_isready", "-q", "-h", "127.0.0.1", "-p", str(self.port),
                                      "-U", "postgres", "-d", "postgres"], check=False)
            if ready.returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError(f"PostgreSQL is not ready on port {self.port}:\n"
                           f"{self.cluster.tail(self.log)}")

    def stop(self, mode: str = "immediate") -> None:
        if self.running:
            self.cluster.run(["pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop"],
                             check=False)
            self.running = False


class ThrowawayCluster:
    """A disposable PostgreSQL server (and optionally its synchronous standby)."""

    def __init__(self, fsync: bool = False, synchronous_standby: bool = False,
                 bindir: Path | None = None) -> None:
        self.fsync = fsync
        self.synchronous_standby = synchronous_standby
        self.bindir = bindir or find_bindir()
        self._as_postgres = os.geteuid() == 0
        self.root = Path(tempfile.mkdtemp(prefix="dpone-pg-"))
        self.primary = _Server(self, "primary")
        self.standby: _Server | None = _Server(self, "standby") if synchronous_standby else None

    # -- process helpers ---------------------------------------------------------------------

    def run(self, argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.bindir / argv[0]), *argv[1:]]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        env = {**os.environ, "LC_ALL": "C", "LANG": "C", "TZ": "UTC"}
        result = subprocess.run(command, capture_output=True, text=True, env=env,
                                cwd=self.root, check=False)
        if check and result.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed ({result.returncode}):\n{result.stdout}\n"
                               f"{result.stderr}")
        return result

    @staticmethod
    def tail(path: Path, lines: int = 40) -> str:
        try:
            return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def dsn(self) -> str:
        return self.primary.dsn

    @property
    def standby_dsn(self) -> str:
        if self.standby is None:
            raise RuntimeError("this cluster has no standby")
        return self.standby.dsn

    def _settings(self) -> dict[str, str]:
        settings = {"fsync": "on" if self.fsync else "off"}
        if not self.fsync:
            settings["full_page_writes"] = "off"
        if self.synchronous_standby:
            settings.update({"wal_level": "replica", "max_wal_senders": "4",
                             "synchronous_standby_names": STANDBY_NAME,
                             "synchronous_commit": "on"})
        return settings

    def start(self) -> ThrowawayCluster:
        if self._as_postgres:
            owner = pwd.getpwnam("postgres")
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
        self.root.chmod(0o700)
        self.run(["initdb", "-D", str(self.primary.data), "-U", "postgres", "--auth=trust",
                  "-E", "UTF8", "--locale=C", "--no-sync"])
        self.primary.start(self._settings())
        if self.standby is not None:
            self._start_standby(self.standby)
        return self

    def _start_standby(self, standby: _Server) -> None:
        conninfo = (f"host=127.0.0.1 port={self.primary.port} user=postgres "
                    f"application_name={STANDBY_NAME}")
        self.run(["pg_basebackup", "-D", str(standby.data), "-d", conninfo, "-X", "stream",
                  "--no-sync", "-R"])
        standby.start({**self._settings(), "primary_conninfo": f"'{conninfo}'",
                       "hot_standby": "on"})
        deadline = time.monotonic() + _START_TIMEOUT
        query = ("SELECT count(*) FROM pg_stat_replication "
                 f"WHERE application_name = '{STANDBY_NAME}' AND sync_state = 'sync'")
        while time.monotonic() < deadline:
            out = self.run(["psql", "-h", "127.0.0.1", "-p", str(self.primary.port), "-U",
                            "postgres", "-d", "postgres", "-Atc", query], check=False)
            if out.stdout.strip() == "1":
                return
            time.sleep(0.1)
        raise RuntimeError(f"the standby did not become synchronous:\n{self.tail(standby.log)}")

    def promote_standby(self) -> None:
        if self.standby is None:
            raise RuntimeError("this cluster has no standby")
        self.run(["pg_ctl", "-D", str(self.standby.data), "-w", "promote"])

    def stop(self) -> None:
        try:
            if self.standby is not None:
                self.standby.stop()
            self.primary.stop()
        finally:
            # What the journals and sources left in the data files and the WAL (the whole-run
            # sentinel search), before the cluster is removed.
            scan_tree(self.root, f"postgresql:{self.root.name}")
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> ThrowawayCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
