"""Every route has a row in the access matrix, and every row holds for every role."""

import pytest

from tests.access_matrix import MATRIX, ROLES
from tests.conftest import login


def test_every_route_is_in_the_access_matrix(app):
    endpoints = {rule.endpoint for rule in app.url_map.iter_rules()}
    missing = sorted(endpoints - set(MATRIX))
    assert not missing, f"routes without a row in tests/access_matrix.py: {missing}"
    stale = sorted(set(MATRIX) - endpoints)
    assert not stale, f"rows for routes that no longer exist: {stale}"


def test_every_method_of_every_route_is_covered(app):
    for rule in app.url_map.iter_rules():
        methods = (rule.methods or set()) - {"HEAD", "OPTIONS"}
        covered = {method for method, _, _ in MATRIX[rule.endpoint]}
        assert methods <= covered, f"{rule.endpoint}: no row for {sorted(methods - covered)}"


ROWS = [(endpoint, method, url, role, expected[role])
        for endpoint, rows in sorted(MATRIX.items())
        for method, url, expected in rows for role in ROLES]


@pytest.mark.parametrize("endpoint, method, url, role, expected", ROWS,
                         ids=[f"{r[0]}-{r[1]}-{r[2]}-{r[3]}" for r in ROWS])
def test_access(app, make, event, endpoint, method, url, role, expected):
    client = app.test_client()
    other = make.user(roles=("bidder",), email="other-party@example.org")
    if role != "anon":
        user_email = f"{role}-caller@example.org"
        make.user(roles=(role,), email=user_email)
        assert login(client, user_email).status_code == 302
    target = url.format(slug="fwwcm-2015", other_user=other)
    response = client.open(target, method=method)
    response.close()
    assert response.status_code == expected, f"{method} {target} as {role}: {response.status_code}"
