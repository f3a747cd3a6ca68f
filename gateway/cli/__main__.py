"""`python -m gateway.cli`: the `gateway` program."""

from . import run

run()
