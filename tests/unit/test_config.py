from pathlib import Path

import pytest

from footnote.config import describe, load_settings
from footnote.errors import ConfigError


def test_every_setting_is_documented() -> None:
    undocumented = [name for name, _t, doc in describe() if not doc.strip()]
    assert undocumented == []


def test_precedence_file_then_env_then_overrides(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[ingest]\nmax_file_mb = 5\nmax_pages = 7\n")
    env = {"FOOTNOTE_INGEST__MAX_PAGES": "9", "FOOTNOTE_RETRIEVAL__K": "3"}
    s = load_settings(tmp_path, {"retrieval": {"k": 4}}, environ=env)
    assert s.ingest.max_file_mb == 5
    assert s.ingest.max_pages == 9
    assert s.retrieval.k == 4
    assert s.store_url == f"sqlite:///{tmp_path / 'footnote.db'}"


def test_bad_values_and_unknown_keys_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="max_pages"):
        load_settings(tmp_path, environ={"FOOTNOTE_INGEST__MAX_PAGES": "-1"})
    (tmp_path / "config.toml").write_text("[ingest]\nmax_fiel_mb = 5\n")
    with pytest.raises(ConfigError, match="max_fiel_mb"):
        load_settings(tmp_path, environ={})
    (tmp_path / "config.toml").write_text("[ingest\n")
    with pytest.raises(ConfigError, match=r"config\.toml"):
        load_settings(tmp_path, environ={})


def test_no_role_defaults_to_a_remote_model() -> None:
    s = load_settings(Path("/nonexistent-ws"), environ={})
    for name, binding in s.models:
        url = getattr(binding, "url", None)
        if url is not None:
            assert url == "" or url.startswith("local:"), name


def test_only_real_settings_come_from_the_environment(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    """The README's `FOOTNOTE_NO_LLM=1 ./scripts/quickstart` must not break the settings; a typo
    is warned about, not fatal; list settings take `a,b` or JSON (issue #15)."""
    env = {
        "FOOTNOTE_NO_LLM": "1",  # read by scripts/setup, not a setting
        "FOOTNOTE_WHEEL_CACHE": "/tmp/wheels",
        "FOOTNOTE_RETRIEVL__K": "3",  # a typo
        "FOOTNOTE_INGEST__DEFAULT_LABELS": "internal, no-external-model",
        "FOOTNOTE_INGEST__DEFAULT_ACL_GROUPS": '["team-a", "team b"]',
        "FOOTNOTE_MODELS__EMBED__URL": "local:wordllama",
        "FOOTNOTE_WORKSPACE": str(tmp_path),
    }
    with caplog.at_level("WARNING", logger="footnote.config"):
        s = load_settings(None, environ=env)
    assert s.workspace == tmp_path and s.models.embed.url == "local:wordllama"
    assert s.ingest.default_labels == ("internal", "no-external-model")
    assert s.ingest.default_acl_groups == ("team-a", "team b")
    assert s.retrieval.k != 3
    warned = caplog.text
    assert "FOOTNOTE_RETRIEVL__K" in warned and "FOOTNOTE_NO_LLM" not in warned


def test_shared_data_is_found_beside_the_checkout_or_above_it() -> None:
    from pathlib import Path

    from footnote.config import shared_data_candidates

    checkout = Path(__file__).resolve().parents[2]
    candidates = shared_data_candidates()
    assert candidates[0] == checkout / "shared" / "data"
    assert checkout.parent / "shared" / "data" in candidates
