"""Who is the operator of a gateway: the tokens that open the console and `/metrics`.

An operator proves it with a bearer token: the admin token (`[console] admin_token_sha256`, or
`admin_token_env` naming a variable that holds it), or a `[[serve.tokens]]` token whose principal has
the `admin` role. With none of them configured, the gateway makes one on first use, in the data
directory (`console-token`, readable by its owner only): whoever can read that file on this machine
is the operator, as with `gateway approve`. Only SHA-256 digests are held; a token is never logged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from .errors import UserError
from .files import private_secret
from .settings.loading import Settings

ADMIN_ROLE = "admin"
ADMIN_NAME = "admin-token"
"""The name decisions made with the admin token (configured or local) are recorded under."""
LOCAL_TOKEN_FILE = "console-token"


def digest(token: str) -> str:
    """The SHA-256 hex digest a token is stored as: the token itself is never kept."""
    return hashlib.sha256(token.encode()).hexdigest()


def admin_tokens(settings: Settings, environ: Mapping[str, str], *, local: bool = True) -> dict[str, str]:
    """SHA-256 hex digest of each operator token -> the name its decisions are recorded under.

    With `local` and no token configured, the data directory's own token (made when missing).

    Raises:
        UserError: `admin_token_env` names a variable that is not set; the local token cannot be kept.
    """
    console = settings.console
    tokens: dict[str, str] = {}
    if console.admin_token_env is not None:
        value = environ.get(console.admin_token_env, "")
        if not value:
            raise UserError(
                f"console.admin_token_env: environment variable {console.admin_token_env} is not set; "
                "set it to the console's admin token, or remove the setting"
            )
        tokens[digest(value)] = ADMIN_NAME
    elif console.admin_token_sha256 is not None:
        tokens[console.admin_token_sha256] = ADMIN_NAME
    for entry in settings.serve.tokens:
        principal = settings.principals.get(entry.principal)
        if principal is None or ADMIN_ROLE not in principal.roles:
            continue
        if entry.sha256 is not None:
            tokens[entry.sha256] = entry.principal
        elif entry.env is not None and environ.get(entry.env):
            tokens[digest(environ[entry.env])] = entry.principal
    if not tokens and local:
        tokens[digest(private_secret(local_token_path(settings), what="the console's admin token"))] = (
            ADMIN_NAME
        )
    return tokens


def local_token_path(settings: Settings) -> Path:
    """Where the local admin token lives: in the data directory, readable by its owner only."""
    return settings.data_dir / LOCAL_TOKEN_FILE


def uses_local_token(settings: Settings, environ: Mapping[str, str]) -> bool:
    """Whether no operator token is configured, so the data directory's own token opens the console."""
    return not admin_tokens(settings, environ, local=False)
