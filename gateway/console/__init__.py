"""The operator console: approvals, activity, discovery and the catalog in a web page.

Owns the console's Starlette application (`app.py`), who may use it and how a browser stays signed in
(`auth.py`: admin tokens, the session cookie, CSRF tokens), reading the audit log from its end
(`activity.py`), deciding pending calls (`approvals.py`), what the catalog and the fronted servers
look like to an operator (`catalog.py`), the discovery playground (`playground.py`), and its
templates and one small script shipped inside the package (no CDN, no build step).

May import the core, `search`, `usage`, `fronting` and `filetools` (the last two only to describe
their tools), plus Starlette and Jinja2 (the `console` extra); never the adapters or the command
line. `gateway serve --transport http` mounts it at `/console/`; `gateway console` serves it alone.
"""

from __future__ import annotations

from .app import console_app

__all__ = ["console_app"]
