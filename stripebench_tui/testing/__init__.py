"""Test helpers that ship with the package, so other projects' tests and CI can use them too."""
