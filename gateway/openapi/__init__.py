"""REST APIs described in OpenAPI, served as catalogs: one tool per operation, loaded lazily.

Owns everything vendor-neutral about an OpenAPI description: reading it (`document`: JSON or YAML,
3.0 or 3.1, references, problems with their JSON pointers), the operation list and its disk cache
(`operations`, `index`), schemas made JSON schemas (`schemas`), an operation's parameters and how
arguments become a request (`params`, `validation`, `request`), credentials (`auth`), sending and
mapping answers with httpx (`client`), the catalog provider (`provider`), the report of
`gateway openapi check` (`check`) and cleaning the description's text (`text`).

It may import the core (definition, catalog, names, actions, errors, config, toolset,
schema_params) and nothing else of the gateway: never the engine, the runtime, the command line,
the adapters, the agent or another room. The runtime loads its provider through the
`metatool_gateway.catalogs` entry point `openapi`.
"""

from __future__ import annotations

from .check import Report, check
from .document import Problem, SpecError
from .provider import OpenApi, OpenApiCatalogs, provide

__all__ = ["OpenApi", "OpenApiCatalogs", "Problem", "Report", "SpecError", "check", "provide"]
