"""What a gateway is configured with, and where the values come from.

- `sections`: every section of the TOML file and `Settings`, each with a sentence for what is not
  valid (one `Section` base: unknown keys are errors).
- `loading`: the file, then environment variables, then command-line flags (`load_settings`).

Part of the core: it imports pydantic, platformdirs and `gateway.errors`, nothing of the engine or
another room; every room that is configured reads its sections from here.
"""
