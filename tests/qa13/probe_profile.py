"""Not collected by default (no test_ prefix): run by test_readme_profile.py in a subprocess."""

from hypothesis import settings


def test_print_profile():
    print(f"\nPROFILE derandomize={settings.default.derandomize} database={settings.default.database}")
