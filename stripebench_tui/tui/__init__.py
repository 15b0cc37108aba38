"""The Textual user interface: replay (and later live) views of an episode."""
