"""Tests of gateway/agent/."""
