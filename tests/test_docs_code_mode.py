"""docs/code-mode.md quotes the code as it is: the real session, run_code's description, the limits' defaults."""

from __future__ import annotations

from pathlib import Path

from gateway.code import text
from gateway.settings.sections import CodeSettings

from . import code_mode_session, concepts_session

PAGE = (Path(__file__).resolve().parents[1] / "docs" / "code-mode.md").read_text()


def test_the_real_session_in_code_mode_is_what_a_real_run_prints() -> None:
    # A changed text or step fails here; rewrite the page with `python -m tests.code_mode_session --write`.
    fresh = code_mode_session.session()
    assert fresh.count("model -> ") == 4 and "confirmation_required" in fresh and "program_error" in fresh
    on_page = code_mode_session.on_page()
    assert concepts_session.normalise(on_page) == concepts_session.normalise(fresh)


def test_the_page_quotes_run_codes_description_as_the_model_reads_it() -> None:
    assert " ".join(text.DESCRIPTION.split()) in " ".join(PAGE.split())


def test_the_page_quotes_run_codes_description_alone_as_the_model_reads_it() -> None:
    assert " ".join(text.ALONE_DESCRIPTION.split()) in " ".join(PAGE.split())


def test_the_page_states_each_limits_default() -> None:
    for name, field in CodeSettings.model_fields.items():
        if name not in ("enabled", "only"):  # switches, not limits
            assert f"| `code.{name}` | {field.default:g} |" in PAGE, name


def test_the_page_quotes_the_overviews_next_step_inside_a_program_as_the_program_reads_it() -> None:
    assert " ".join(text.OVERVIEW_NEXT.split()) in " ".join(PAGE.split())


def test_the_real_session_with_a_plan_is_what_a_real_run_prints() -> None:
    # Rewrite the page with `python -m tests.code_mode_session --write`.
    fresh = code_mode_session.plan_session()
    assert "A program's plan of 3 writes" in fresh and "--only 1,3" in fresh and '"plan":{' in fresh
    on_page = code_mode_session.on_page_plan()
    assert concepts_session.normalise(on_page) == concepts_session.normalise(fresh)
