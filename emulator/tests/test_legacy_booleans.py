"""Older stripe-python releases form-encode Python booleans as "True"/"False"; the emulator takes both spellings."""

from stripebench_emulator.testing import api, emulator, emulator_server  # noqa: F401 - pytest fixtures, requested by name below


def test_capitalised_booleans_are_accepted_and_others_refused(api):  # noqa: F811 - pytest fixtures imported above, requested by name
    made = api.post("/v1/products", data={"name": "Lamp", "active": "False"})
    assert made.status_code == 200, made.text
    assert made.json()["active"] is False
    again = api.post(f"/v1/products/{made.json()['id']}", data={"active": "True"})
    assert again.json()["active"] is True
    wrong = api.post("/v1/products", data={"name": "Lamp", "active": "yes"})
    assert wrong.status_code == 400
    assert wrong.json()["error"]["message"] == "Invalid boolean: yes"
