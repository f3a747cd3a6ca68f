"""Settings every test process starts from."""

from __future__ import annotations

import os

# The dense layer encodes a large catalog in a background thread for minutes: tests that want it ask
# for it (`dense=True`, or GATEWAY_DENSE=on for a subprocess); every other test ranks without it,
# in this process and in the gateway processes it starts.
os.environ["GATEWAY_DENSE"] = "off"
