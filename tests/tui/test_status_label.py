"""The status bars name the episode and where it ran (a local run says it was not confined)."""

from stripebench_tui.core.events import Header
from stripebench_tui.tui.widgets.status_bar import episode_label


def test_local_episodes_show_env_agent_model_and_that_nothing_was_confined():
    label = episode_label(Header(env="checkout-migration", agent="anthropic", model="m-1", sandbox="local"))
    assert label.plain == "checkout-migration · anthropic · m-1 · local (not confined)"


def test_traces_that_do_not_say_where_they_ran_show_no_place():
    assert episode_label(Header(env="shop", agent="replay", sandbox="")).plain == "shop · replay"


def test_docker_episodes_show_the_container():
    header = Header(env="bookings-payments", agent="oracle", sandbox="docker", extra={"container": "stripebench-ep-1a2b"})
    assert episode_label(header).plain == "bookings-payments · oracle · docker stripebench-ep-1a2b"


def test_untrusted_header_text_is_cleaned():
    label = episode_label(Header(env="shop\x1b[31m", agent="a\x07"))
    assert "\x1b" not in label.plain and "\x07" not in label.plain
