"""``stripebench serve``: the web server that shows the TUI in a browser (textual-serve), its tokens and live host."""
