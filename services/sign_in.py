"""`gateway auth google`: one sign-in for everything served from a Google account.

It sits above both Google packages: the workspace tools (`services.google`) and the Google API
catalog (`services.google_apis`), whose served methods can need more scopes than the workspace.
Registered under the `metatool_gateway.auth` entry points, so the gateway finds it without
importing this package by name.
"""

from __future__ import annotations

from gateway.errors import UserError
from gateway.toolset import ProviderOptions

from .google.credentials import GoogleOptions, authorize


def google(options: ProviderOptions, *, open_browser: bool = True) -> str:
    """Run the installed-app OAuth flow for `options.extra["google"]`, with the served APIs' scopes."""
    settings = GoogleOptions.parse(options.extra.get("google"), data_dir=options.data_dir)
    if "google-apis" in options.extra.get("catalogs", ()):
        from .google_apis.provider import CatalogOptions, sign_in_scopes

        catalog = CatalogOptions.parse(options.extra.get("google_apis"))
        settings = settings.with_scopes(
            sign_in_scopes(catalog, allow_permanent_delete=settings.allow_permanent_delete)
        )
    if settings.per_principal:  # a team gateway: this person's own account, into the vault
        from .google.principals import connect

        grants, principal = options.extra.get("vault"), options.extra.get("principal")
        if grants is None or not isinstance(principal, str):
            raise UserError(
                "[google] per_principal keeps each person's account in the vault: set its keys first"
            )
        return connect(settings, grants, principal, open_browser=open_browser)
    return authorize(settings, open_browser=open_browser)
