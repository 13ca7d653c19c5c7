"""``racperf matrix`` run to its end in a test: its rows by (source, target)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cluster_helpers import racperf
from tests.helpers.netns_helpers import NetnsCluster


def matrix(cluster: NetnsCluster, data: Path, *args: str) -> dict[tuple[str, str], dict]:
    """``racperf matrix ... --json`` to its end (exit 0), its rows by (source, target)."""
    done = racperf(
        "matrix", *args, "--cluster", str(cluster.cluster_file), "--json", "--data-dir", str(data), timeout_s=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return {(row["source"], row["target"]): row for row in map(json.loads, done.stdout.splitlines())}
