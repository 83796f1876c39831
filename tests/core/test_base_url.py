"""BASE_URL: one setting for every absolute link, the same in a request, a worker and the command line."""

import pytest

from app import ConfigurationError, create_app
from core.urls import external_url


def _app(tmp_path, **config):
    return create_app({"TESTING": True, "SECRET_KEY": "x", "UPLOAD_DIR": str(tmp_path / "u"),
                       "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path}/db.sqlite3", **config})


@pytest.mark.no_db
def test_production_refuses_to_start_without_base_url_and_says_why(tmp_path):
    with pytest.raises(ConfigurationError) as refused:
        _app(tmp_path, GAMBIT_ENV="production", BASE_URL="")
    assert str(refused.value).startswith("BASE_URL is not set: in production (GAMBIT_ENV=production) Gambit needs "
                                         "the site's public address")


@pytest.mark.no_db
@pytest.mark.parametrize("wrong", ["gambit.fide.com", "ftp://gambit.fide.com", "https://", "https://x.org/?a=1"])
def test_a_base_url_that_is_not_an_absolute_address_is_refused(tmp_path, wrong):
    with pytest.raises(ConfigurationError, match="BASE_URL must be"):
        _app(tmp_path, BASE_URL=wrong)


@pytest.mark.no_db
def test_links_are_built_on_base_url_in_a_request_and_outside_one(tmp_path):
    app = _app(tmp_path, BASE_URL="https://gambit.fide.com/bids-2015/", GAMBIT_ENV="production")
    assert app.config["SESSION_COOKIE_SECURE"] is True
    with app.app_context():  # a worker, the scheduler, the CLI
        assert external_url("contracts.view", contract_id=7) == "https://gambit.fide.com/bids-2015/contracts/7"
    with app.test_request_context("/", base_url="http://10.0.0.5:8000"):  # a request that came in on another host
        assert external_url("bids.view", bid_id=3) == "https://gambit.fide.com/bids-2015/bids/3"


@pytest.mark.no_db
def test_without_base_url_a_request_uses_its_own_address_and_the_cli_the_development_one(tmp_path):
    app = _app(tmp_path)
    with app.test_request_context("/", base_url="http://localhost:8123"):
        assert external_url("bids.view", bid_id=3) == "http://localhost:8123/bids/3"
    with app.app_context():
        assert external_url("bids.view", bid_id=3) == "http://127.0.0.1:5000/bids/3"


def test_the_cron_reminder_link_is_absolute(app, runner):
    with app.app_context():
        assert external_url("contracts.view", contract_id=1) == "http://gambit.test/contracts/1"
