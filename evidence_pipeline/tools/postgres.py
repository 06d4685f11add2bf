"""A local PostgreSQL cluster for Dagster's storage: ``python -m evidence_pipeline.tools.postgres start data/postgres``.

Uses the Debian ``postgresql`` package's binaries (``initdb``, ``pg_ctl``). The cluster
lives in a folder of its own (``data/postgres`` for ``make postgres``), listens on
127.0.0.1 only, trusts local connections (a development cluster, never a server), and
holds one database for the Dagster instance. PostgreSQL refuses to run as root: as
root the binaries run as the ``postgres`` system user, which then owns the folder.
Every step is idempotent: ``start`` on a running cluster only prints its URL.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_PORT = 5433  # beside a system cluster on 5432
SYSTEM_USER = "postgres"


def pg_bin(name: str) -> str | None:
    """A PostgreSQL program from PATH or the newest /usr/lib/postgresql/<v>/bin."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(Path(p).parts[4]))
    return candidates[-1] if candidates else None


def available() -> bool:
    return all(pg_bin(n) for n in ("initdb", "pg_ctl", "psql"))


@dataclass
class LocalPostgres:
    data_dir: Path
    port: int = DEFAULT_PORT
    database: str = "dagster"
    user: str = "dagster"

    @property
    def pgdata(self) -> Path:
        return self.data_dir / "pgdata"

    @property
    def url(self) -> str:
        # The driver is named: SQLAlchemy 2.1 maps a bare postgresql:// to psycopg 3, while
        # dagster-postgres brings psycopg2.
        return f"postgresql+psycopg2://{self.user}@127.0.0.1:{self.port}/{self.database}"

    def _as_owner(self, args: list[str], **kw) -> subprocess.CompletedProcess:
        cmd = ["runuser", "-u", SYSTEM_USER, "--", *args] if os.geteuid() == 0 else args
        return subprocess.run(cmd, text=True, capture_output=True, **kw)

    def _check(self, proc: subprocess.CompletedProcess, what: str) -> None:
        if proc.returncode != 0:
            raise RuntimeError(f"{self.data_dir}: {what} failed: {(proc.stderr or proc.stdout).strip()}")

    def init(self) -> None:
        if (self.pgdata / "PG_VERSION").exists():
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            # The postgres user must reach the folder: open the path to it for traversal.
            for parent in [self.data_dir, *self.data_dir.resolve().parents]:
                mode = parent.stat().st_mode
                if not mode & 0o001:
                    parent.chmod(mode | 0o001)
            shutil.chown(self.data_dir, SYSTEM_USER, SYSTEM_USER)
        proc = self._as_owner([pg_bin("initdb"), "-D", str(self.pgdata), "-U", self.user, "--auth=trust", "-E", "UTF8", "--no-locale"])
        self._check(proc, "initdb")

    def running(self) -> bool:
        return self._as_owner([pg_bin("pg_ctl"), "-D", str(self.pgdata), "status"]).returncode == 0

    def start(self) -> None:
        self.init()
        if not self.running():
            options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.pgdata}"
            proc = self._as_owner(
                [pg_bin("pg_ctl"), "-D", str(self.pgdata), "-l", str(self.pgdata / "server.log"), "-o", options, "-w", "start"]
            )
            self._check(proc, "pg_ctl start")
        self._create_database()

    def _psql(self, sql: str, database: str = "postgres") -> subprocess.CompletedProcess:
        return subprocess.run(
            [pg_bin("psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", self.user, "-d", database, "-tAc", sql],
            text=True,
            capture_output=True,
        )

    def _create_database(self) -> None:
        for _ in range(50):  # the server may still be opening its port
            exists = self._psql(f"SELECT 1 FROM pg_database WHERE datname = '{self.database}'")
            if exists.returncode == 0:
                break
            time.sleep(0.1)
        self._check(exists, "connect")
        if exists.stdout.strip() != "1":
            self._check(self._psql(f'CREATE DATABASE "{self.database}"'), "create database")

    def reset_database(self) -> None:
        """Drop and re-create the database (a benchmark's clean slate)."""
        self._check(self._psql(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)'), "drop database")
        self._create_database()

    def stop(self) -> None:
        if (self.pgdata / "PG_VERSION").exists() and self.running():
            self._check(self._as_owner([pg_bin("pg_ctl"), "-D", str(self.pgdata), "-m", "fast", "-w", "stop"]), "pg_ctl stop")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evidence_pipeline.tools.postgres", description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=["start", "stop", "url"])
    ap.add_argument("data_dir", type=Path)
    ap.add_argument("--port", type=int, default=int(os.environ.get("DAGSTER_PG_PORT", DEFAULT_PORT)))
    args = ap.parse_args(argv)
    if not available():
        print("postgres: initdb/pg_ctl/psql not found (apt-get install -y postgresql)", file=sys.stderr)
        return 2
    cluster = LocalPostgres(args.data_dir.resolve(), port=args.port)
    if args.action == "start":
        cluster.start()
    elif args.action == "stop":
        cluster.stop()
    print(cluster.url)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
