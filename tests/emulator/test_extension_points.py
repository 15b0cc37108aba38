"""The hooks later phases build on: browser page routes and the request's base URL."""

from __future__ import annotations

import httpx
from starlette.requests import Request
from starlette.responses import PlainTextResponse

from stripebench_tui.emulator import running_emulator
from stripebench_tui.emulator.context import RequestContext
from stripebench_tui.emulator.registry import PAGE_ROUTES, Resource, page_route


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
        PAGE_ROUTES.pop()
        from stripebench_tui.emulator import registry
        registry.ROUTES.remove(widgets.routes[0])
        del registry.RESOURCES["test_widget"]
