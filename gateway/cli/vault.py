"""`gateway vault`: the operator's side of the vault (docs/security.md, "The vault").

gateway vault key                      # a new key, for GATEWAY_VAULT_KEYS or [vault] key_file
gateway vault list [--principal P]     # who connected which account (never a secret)
gateway vault rotate                   # seal every grant again with the first key
gateway vault forget PRINCIPAL SERVICE # disconnect one grant
gateway connect openapi:NAME           # your own key or token, for an API that takes each caller's
"""

from __future__ import annotations

import argparse
import getpass
import sys
import time

from ..errors import UserError
from ..rendering import shown
from ..runtime import vault_from
from ..settings.loading import Settings
from ..vault import Grant, new_key
from ..vault.grants import Kind
from . import commands
from .output import dump


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("verb", choices=["key", "list", "rotate", "forget"])
    parser.add_argument("target", nargs="*", help="forget: the principal and the service")


def run(settings: Settings, args: argparse.Namespace) -> int:
    if args.verb == "key":
        print(new_key())
        return 0
    vault = vault_from(settings)
    try:
        if args.verb == "rotate":
            print(f"{vault.rotate()} grant(s) sealed again with the current vault key")
            return 0
        if args.verb == "forget":
            if len(args.target) != 2:
                raise UserError("gateway vault forget PRINCIPAL SERVICE: whose grant, for which service")
            principal, service = args.target
            if not vault.delete(principal, service):
                print(f"gateway: {principal} has no grant for {service}", file=sys.stderr)
                return 1
            print(f"forgot the grant of {shown(principal)} for {shown(service)}")
            return 0
        seen = vault.connections(args.principal)  # --principal: theirs only
        if args.json:
            print(dump([{**vars(c), "scopes": list(c.scopes)} for c in seen]))
            return 0
        if not seen:
            print("No one has connected an account.")
        for c in seen:
            left = (
                ""
                if c.expires_at is None
                else f", its access token expires in {max(0, round(c.expires_at - time.time()))} s"
            )
            print(f"{shown(c.principal)}  {shown(c.service)}  {shown(c.account or '?')}  ({c.kind}{left})")
        return 0
    finally:
        vault.close()


def connect(settings: Settings, args: argparse.Namespace) -> int:
    """`gateway connect openapi:NAME`: the local user's own key or token for an entry that takes
    each caller's (`per_principal`), read from the terminal without echo (or one line of stdin);
    `gateway connect google`: their own Google account, through the OAuth sign-in."""
    service = args.service
    if service == "google":  # the person's own Google account, through the service's sign-in
        return commands.auth(settings, args)
    entry = next((e for e in settings.openapi if f"openapi:{e.name}" == service), None)
    if entry is None or not entry.auth.per_principal:
        takes = [f"openapi:{e.name}" for e in settings.openapi if e.auth.per_principal]
        raise UserError(
            f"{service!r} takes no one's own credentials here; the services that do: {', '.join(takes) or 'none'} "
            "([[openapi]] auth per_principal = true)"
        )
    what = "API key" if entry.auth.type == "api_key" else "token"
    if sys.stdin.isatty():
        secret = getpass.getpass(f"gateway: your {what} for {entry.name} (not echoed): ")
    else:
        secret = sys.stdin.readline()
    if not secret.strip():
        raise UserError(f"no {what} was given: nothing was stored")
    vault = vault_from(settings)
    try:
        kind: Kind = "api_key" if entry.auth.type == "api_key" else "oauth"
        grant = Grant(
            settings.principal,
            service,
            kind=kind,
            api_key=secret.strip() if kind == "api_key" else None,
            access_token=secret.strip() if kind == "oauth" else None,
        )
        vault.put(grant)
    finally:
        vault.close()
    print(f"connected {shown(service)} for {shown(settings.principal)}: its calls now carry your {what}")
    return 0
