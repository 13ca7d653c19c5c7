#!/usr/bin/env python3
"""The offline bundle: racperf and every dependency as wheels, for database nodes with no network.

    python scripts/bundle.py build [--out DIR]   # dist/racperf-VERSION-offline.tar.gz (make bundle)
    python scripts/bundle.py lock                # bundle/requirements.lock again (make bundle-lock)

The bundle holds wheels for CPython 3.11 and 3.12 on manylinux2014 (glibc 2.17 and later) for
x86_64 and aarch64: Oracle Linux 8 and 9 on either architecture, from their AppStream's
python3.11 / python3.12. What it holds is bundle/requirements.lock, with a sha256 for every
wheel of every platform, so the same lock gives the same wheels; racperf's own wheel and the
archive are built from the last commit (git archive HEAD: uncommitted changes are left out, and
said) with SOURCE_DATE_EPOCH from its time, so one commit gives the same bytes every time.
Beside the wheels: install.sh, README.txt, VERSION and SHA256SUMS (install.sh checks it first,
so a truncated copy fails before anything is written).

pip does the work (`pip download --only-binary=:all: --platform ...`): it is the one tool that
knows wheel tags, and it is what installs the bundle on the node.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "bundle" / "requirements.lock"
#: (pip's platform tag, the architecture's name): manylinux2014 is glibc 2.17, Oracle Linux 7's
PLATFORMS = (("manylinux2014_x86_64", "x86_64"), ("manylinux2014_aarch64", "aarch64"))
PYTHONS = ("3.11", "3.12")
#: numpy 2.3 and later ship manylinux_2_28 wheels only (glibc 2.28); 2.2 is the last for 2.17
LOCK_CONSTRAINTS = ("numpy<2.3",)


def version() -> str:
    text = (REPO / "racperf_tui" / "__init__.py").read_text()
    found = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    if not found:
        sys.exit("bundle.py: no __version__ in racperf_tui/__init__.py")
    return found.group(1)


def source_date_epoch() -> int:
    """The last commit's time: the wheel's and the archive's timestamps, for the same bytes."""
    if "SOURCE_DATE_EPOCH" in os.environ:
        return int(os.environ["SOURCE_DATE_EPOCH"])
    out = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%ct"], capture_output=True, text=True)
    return int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip() else 315532800


def pip(*args: str, env: dict[str, str] | None = None) -> None:
    argv = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    done = subprocess.run(argv, env=env)
    if done.returncode != 0:
        sys.exit(f"bundle.py: pip failed ({done.returncode}): {' '.join(argv[3:])}")


def download_platforms(requirements: Path, dest: Path, *, hashes: bool) -> None:
    """Every platform's wheels into ``dest``, the four pip runs side by side (each mostly waits
    on the index)."""
    argvs = [
        [
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--platform",
            platform,
            "--python-version",
            python,
            "--implementation",
            "cp",
            *(["--require-hashes"] if hashes else []),
            "-r",
            str(requirements),
            "-d",
            str(dest),
        ]  # fmt: skip
        for platform, _arch in PLATFORMS
        for python in PYTHONS
    ]
    with concurrent.futures.ThreadPoolExecutor(len(argvs)) as pool:
        list(pool.map(lambda argv: pip(*argv), argvs))


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def project_of(wheel: str) -> str:
    return re.sub(r"[-_.]+", "-", wheel.split("-", 1)[0]).lower()


def lock() -> None:
    """Resolve racperf's dependencies (and pip, which installs them on the node), then record
    every platform's wheel hashes."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        pip(
            "install", "--quiet", "--dry-run", "--ignore-installed", "--only-binary=:all:",
            "--report", str(report), str(REPO), "pip", *LOCK_CONSTRAINTS,
        )  # fmt: skip
        pins = {}
        for item in json.loads(report.read_text())["install"]:
            meta = item["metadata"]
            name = re.sub(r"[-_.]+", "-", meta["name"]).lower()
            if name != "racperf-tui":
                pins[name] = meta["version"]
        pinned = Path(tmp) / "pins.txt"
        pinned.write_text("".join(f"{name}=={ver}\n" for name, ver in sorted(pins.items())))
        wheels = Path(tmp) / "wheels"
        download_platforms(pinned, wheels, hashes=False)
        by_project: dict[str, set[str]] = {}
        for wheel in sorted(wheels.glob("*.whl")):
            by_project.setdefault(project_of(wheel.name), set()).add(sha256(wheel))
    lines = [
        "# The offline bundle's wheels (scripts/bundle.py lock; make bundle-lock): racperf's",
        "# dependencies and pip, for CPython 3.11 and 3.12 on manylinux2014 x86_64 and aarch64,",
        f"# every platform's sha256. Constraints: {', '.join(LOCK_CONSTRAINTS)} (the last with glibc 2.17 wheels).",
    ]
    for name, ver in sorted(pins.items()):
        hashes = sorted(by_project.get(name, ()))
        lines.append(f"{name}=={ver} \\")
        lines += [f"    --hash=sha256:{h}" + (" \\" if i < len(hashes) - 1 else "") for i, h in enumerate(hashes)]
    LOCK.write_text("\n".join(lines) + "\n")
    print(f"wrote {LOCK.relative_to(REPO)}: {len(pins)} projects")


def reproducible_tar(source: Path, archive: Path, epoch: int) -> None:
    """A .tar.gz whose bytes depend only on the files: sorted, owned by root, one mtime."""

    def normalise(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        info.mtime = epoch
        info.mode = 0o755 if info.isdir() or info.name.endswith(".sh") else 0o644
        return info

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        paths = [source, *sorted(source.rglob("*"))]
        for path in paths:
            tar.add(path, arcname=str(path.relative_to(source.parent)), recursive=False, filter=normalise)
    with archive.open("wb") as out, gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=epoch) as gz:
        gz.write(raw.getvalue())


def committed_source(tmp: Path) -> Path:
    """The tree of the last commit (git archive), so that one commit always gives the same
    wheel; the checkout itself when it is not a git checkout (a source archive)."""
    listed = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    if listed.returncode != 0:
        return REPO
    dirty = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
    )
    if dirty.stdout.strip():
        print("bundle.py: uncommitted changes are not in the bundle: it holds the last commit", file=sys.stderr)
    source = tmp / "source"
    source.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "HEAD"], capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(source, filter="data")
    return source


def build(out_dir: Path) -> Path:
    ver = version()
    epoch = source_date_epoch()
    name = f"racperf-{ver}-offline"
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / name
        wheels = root / "wheels"
        wheels.mkdir(parents=True)
        env = {**os.environ, "SOURCE_DATE_EPOCH": str(epoch)}
        source = committed_source(Path(tmp))
        pip("wheel", "--quiet", "--no-deps", "-w", str(wheels), str(source), env=env)
        lock_file = source / LOCK.relative_to(REPO)
        download_platforms(lock_file, wheels, hashes=True)
        shutil.copy2(source / "bundle" / "install.sh", root / "install.sh")
        shutil.copy2(source / "bundle" / "README.txt", root / "README.txt")
        shutil.copy2(lock_file, root / "requirements.lock")
        (root / "VERSION").write_text(ver + "\n")
        files = sorted(p for p in root.rglob("*") if p.is_file())
        (root / "SHA256SUMS").write_text("".join(f"{sha256(p)}  {p.relative_to(root)}\n" for p in files))
        archive = out_dir / f"{name}.tar.gz"
        reproducible_tar(root, archive, epoch)
    size = archive.stat().st_size
    print(f"{archive}: {size / 1048576:.1f} MiB, {len(files)} files, sha256 {sha256(archive)}")
    return archive


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("action", nargs="?", default="build", choices=("build", "lock"))
    parser.add_argument("--out", default=str(REPO / "dist"), help="where the .tar.gz goes (default dist/)")
    args = parser.parse_args()
    if args.action == "lock":
        lock()
    else:
        build(Path(args.out))


if __name__ == "__main__":
    main()
