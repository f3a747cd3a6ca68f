"""The confirmation gate: a destructive call runs only on a party's approval the model cannot give.

- `confirmation`: the gate itself (pending calls, approvals bound to tool, arguments and principal,
  previews, approver channels).
- `stores`: where pending calls are kept (memory, a SQLite file, Redis), so replicas share them.
- `holders`: the leases and locks of paused programs' holders, and why a held call ended.

Part of the core: it imports the core's modules (context, definition, errors, files, rendering) and
no other room; the engine and the command line import it.
"""
