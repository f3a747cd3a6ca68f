"""The embedded local workspace: Calendar, Gmail and Tasks on one SQLite file, no account needed."""
