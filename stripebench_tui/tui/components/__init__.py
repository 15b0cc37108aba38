"""Parts of the episode screens that are not panes: the debugger, the derived findings, the trace's notes. They post
messages to the screen that owns them and never import a screen."""
