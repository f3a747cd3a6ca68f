"""docs/confirmation-and-policy.md's standing approvals quote a real session as it runs today."""

from __future__ import annotations

from . import approvals_session, concepts_session


def test_the_standing_approvals_session_is_what_a_real_run_prints() -> None:
    # A changed text or step fails here; rewrite the page with `python -m tests.approvals_session --write`.
    fresh = approvals_session.session()
    assert fresh.count("confirmation_required") == 3 and '"rule_id":' in fresh
    on_page = approvals_session.on_page()
    assert concepts_session.normalise(on_page) == concepts_session.normalise(fresh)
