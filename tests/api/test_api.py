def test_api_needs_a_session_or_a_token(client, event):
    response = client.get("/api/v1/events")
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert response.get_json()["error"].startswith("Log in, or send a valid API token")


def test_event_json_carries_amounts_as_strings(client, login_as, event):
    login_as("wcoc")
    body = client.get("/api/v1/events/fwwcm-2015").get_json()
    assert body["prize_fund"]["minimum"] == "200000.00"
    assert body["fide_contribution"]["min_share_of_prize_fund"] == "0.20"
    assert body["possible_opening_dates"] == ["2015-10-11", "2015-10-12", "2015-10-13"]
    assert body["criteria"][0] == {"key": "a", "label": "Prize fund", "weight": "20", "article": "15.5(a)"}
    listing = client.get("/api/v1/events").get_json()
    assert [e["slug"] for e in listing["events"]] == ["fwwcm-2015"]


def test_openapi_document_describes_every_api_route(client, app):
    doc = client.get("/api/v1/openapi.json").get_json()
    assert doc["openapi"].startswith("3.")
    documented = set(doc["paths"])
    assert sum(r.rule.startswith("/api/v1/") for r in app.url_map.iter_rules()) >= 9
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/v1/") and rule.endpoint != "api.openapi":
            path = rule.rule[len("/api/v1"):].replace("<", "{").replace(">", "}")
            path = path.replace("{int:", "{")
            assert path in documented, f"{rule.rule} is not in the OpenAPI document"


def test_a_method_the_resource_does_not_have_is_405_with_the_allow_header(client):
    """RFC 9110 15.5.6: a 405 carries Allow, on the API (JSON) and on pages alike."""
    api = client.post("/api/v1/events")
    assert api.status_code == 405 and api.headers["Allow"] == "GET, HEAD, OPTIONS"
    assert api.get_json() == {"error": "That action is not available here.", "status": 405}
    page = client.delete("/login")
    assert page.status_code == 405 and page.headers["Allow"] == "GET, HEAD, OPTIONS, POST"
