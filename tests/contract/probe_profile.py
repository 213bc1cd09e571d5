"""Not collected by default (no test_ prefix): run by test_readme_profile.py in a subprocess."""

from hypothesis import settings


def test_print_profile():
    profile = settings.default
    print(f"\nPROFILE derandomize={profile.derandomize} database={profile.database}")
