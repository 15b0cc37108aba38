"""The hooks later phases build on: browser page routes and the request's base URL."""

from __future__ import annotations

import httpx
from starlette.requests import Request
from starlette.responses import PlainTextResponse

from stripebench_emulator import running_emulator
from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.registry import PAGE_ROUTES, Resource, page_route


def test_page_route_and_resource_registration() -> None:
    @page_route("/_test_pages/{name}")
    def hello_page(emulator):
        async def endpoint(request: Request) -> PlainTextResponse:
            return PlainTextResponse(f"hello {request.path_params['name']} on {emulator.api_version}")
        return endpoint

    widgets = Resource("test_widget", prefix="wid", noun="widget")

    @widgets.route("GET", "/v1/test_widgets/{id}")
    def retrieve(ctx: RequestContext, params: dict, id: str) -> dict:
        return {"id": id, "object": "test_widget", "base_url": ctx.base_url, "_secret": "internal"}

    try:
        with running_emulator() as emu:
            page = httpx.get(f"{emu.url}/_test_pages/ada")
            assert page.status_code == 200 and page.text.startswith("hello ada on ")
            widget = httpx.get(f"{emu.url}/v1/test_widgets/wid_1", headers={"Authorization": "Bearer sk_test_x"})
            assert widget.json() == {"id": "wid_1", "object": "test_widget", "base_url": emu.url}
    finally:
        # Remove this test's page by name: pop() would drop whatever registered last (a page imported lazily
        # while the emulator started, e.g. /_emulator/webhook_settings), breaking later tests.
        PAGE_ROUTES[:] = [r for r in PAGE_ROUTES if r[0] != "/_test_pages/{name}"]
        from stripebench_emulator.model import registry
        registry.ROUTES.remove(widgets.routes[0])
        del registry.RESOURCES["test_widget"]


def test_a_handler_bug_is_a_stripe_api_error_and_rolls_back() -> None:
    gadgets = Resource("test_gadget", prefix="gad", noun="gadget")

    @gadgets.route("POST", "/v1/test_gadgets")
    def create(ctx: RequestContext, params: dict) -> dict:
        ctx.save({"id": ctx.new_id("gad"), "object": "test_gadget", "created": ctx.now()})
        raise RuntimeError("bug in a handler")

    try:
        with running_emulator() as emu:
            auth = {"Authorization": "Bearer sk_test_x"}
            response = httpx.post(f"{emu.url}/v1/test_gadgets", headers=auth)
            assert response.status_code == 500
            assert response.json()["error"]["type"] == "api_error" and "Traceback" not in response.text
            assert emu.emulator.store.scan("test_gadget") == []
            for method, path in (("OPTIONS", "/v1/customers"), ("GET", "/nowhere")):
                other = httpx.request(method, f"{emu.url}{path}", headers=auth)
                assert other.status_code == 404 and "Unrecognized request URL" in other.json()["error"]["message"]
    finally:
        from stripebench_emulator.model import registry
        registry.ROUTES.remove(gadgets.routes[0])
        del registry.RESOURCES["test_gadget"]
