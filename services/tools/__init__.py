"""The workspace tools: Calendar, Gmail and Tasks, one decorated function per tool."""
