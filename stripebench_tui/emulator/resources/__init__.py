"""Every resource module; importing this package registers their routes (order matters only for path clashes)."""

from stripebench_tui.emulator import events  # noqa: F401
from stripebench_tui.emulator.resources import coupons, customers, prices, products, promotion_codes  # noqa: F401
