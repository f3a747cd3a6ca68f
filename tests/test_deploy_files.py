"""The deployment's files (deploy/): each checked by the validator of what reads it.

The Kubernetes manifests against the API's schemas (kubernetes-validate, strict: an unknown field
fails), the router's configurations by HAProxy itself (`haproxy -c`), the replicas' configuration
by the gateway's own settings, and the pieces that must agree with each other (the ConfigMaps and
the files they copy, the compose services and the router's servers).
"""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_validate import validate
from kubernetes_validate.utils import SchemaNotFoundError, ValidationError

from gateway.settings.loading import load_settings

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
MANIFESTS = sorted((DEPLOY / "kubernetes").glob("*.yaml"))
SECRET = "0123456789abcdef" * 4


def _documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _config_map(name: str, key: str) -> str:
    for path in MANIFESTS:
        for doc in _documents(path):
            if doc.get("kind") == "ConfigMap" and doc["metadata"]["name"] == name:
                text: str = doc["data"][key]
                return text
    raise AssertionError(f"no ConfigMap {name}")


@pytest.mark.parametrize(
    "path", [p for p in MANIFESTS if p.name != "kustomization.yaml"], ids=lambda p: p.name
)
def test_every_manifest_validates_strictly_against_the_kubernetes_schemas(path: Path) -> None:
    for doc in _documents(path):
        try:
            validate(doc, "1.31", strict=True)
        except (ValidationError, SchemaNotFoundError) as exc:
            raise AssertionError(f"{path.name}: {doc['kind']}/{doc['metadata']['name']}: {exc}") from None


def test_the_kustomization_names_every_manifest() -> None:
    listed = yaml.safe_load((DEPLOY / "kubernetes" / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == sorted(p.name for p in MANIFESTS if p.name != "kustomization.yaml")


def test_the_replicas_configuration_is_one_the_gateway_accepts_and_the_config_map_copies_it(
    tmp_path: Path,
) -> None:
    shipped = tomllib.loads((DEPLOY / "gateway.toml").read_text())
    assert tomllib.loads(_config_map("metatool-gateway", "config.toml")) == shipped
    environ = {"GATEWAY_CONFIRMATION_SECRET": SECRET, "GATEWAY_DATA_DIR": str(tmp_path)}
    settings = load_settings(DEPLOY / "gateway.toml", environ=environ)
    stores = {settings.confirmation.store, settings.usage.store, settings.limiter.store}
    assert stores == {"redis"} and settings.serve.sessions
    urls = {settings.confirmation.redis_url, settings.usage.redis_url, settings.limiter.redis_url}
    assert urls == {"redis://redis:6379/0"}  # the Redis both compose.yaml and redis.yaml name


def _haproxy() -> str:
    found = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)
    if found is None:
        pytest.skip("no haproxy (install the Debian package: sudo apt-get install haproxy)")
    return found


@pytest.mark.parametrize("which", ["compose", "kubernetes"])
def test_haproxy_accepts_each_router_configuration(which: str, tmp_path: Path) -> None:
    text = (
        (DEPLOY / "haproxy.cfg").read_text()
        if which == "compose"
        else _config_map("metatool-gateway-router", "haproxy.cfg")
    )
    path = tmp_path / "haproxy.cfg"
    path.write_text(text)
    checked = subprocess.run([_haproxy(), "-c", "-f", str(path)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _rules(text: str) -> list[str]:
    """The lines that route: everything but comments and the server lines (names differ by place)."""
    lines = [line.strip() for line in text.splitlines()]
    return [line for line in lines if line and not line.startswith(("#", "server ", "server-template "))]


def test_both_routers_route_alike_and_reach_each_compose_replica() -> None:
    compose_router = (DEPLOY / "haproxy.cfg").read_text()
    assert _rules(compose_router) == _rules(_config_map("metatool-gateway-router", "haproxy.cfg"))
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    replicas = sorted(name for name in compose["services"] if name.startswith("gateway-"))
    servers = sorted(
        line.split()[1] for line in compose_router.splitlines() if line.strip().startswith("server ")
    )
    assert replicas == servers == ["gateway-1", "gateway-2", "gateway-3"]
    volumes = [compose["services"][name]["volumes"] for name in replicas]
    data = [next(v for v in vs if v.endswith(":/data")) for vs in volumes]
    assert len(set(data)) == 3  # a data directory each: its own audit log
    for name in replicas:
        service = compose["services"][name]
        assert service["read_only"] is True and service["stop_signal"] == "SIGTERM"
        assert "./gateway.toml:/etc/metatool-gateway/config.toml:ro" in service["volumes"]
    assert "--appendfsync" in compose["services"]["redis"]["command"]
