"""Tests of gateway/gate/."""
