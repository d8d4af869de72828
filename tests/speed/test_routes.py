"""What the processor says of itself (``speed/routes.py``), read from /proc/cpuinfo."""

from pathlib import Path

import pytest

from rnnsearch_plugin.speed import routes


def test_cpuinfo_field_is_the_first_processors_bare_value(tmp_path, monkeypatch):
    """The value of the first line that names the key, without its padding or newline; "" for a key
    no line names, and where there is no /proc/cpuinfo."""
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD \nflags\t\t: fpu avx2\n\nprocessor\t: 1\nvendor_id\t: Other\n")
    monkeypatch.setattr(routes, "Path", lambda path: cpuinfo if path == "/proc/cpuinfo" else Path(path))
    assert (routes.cpuinfo_field("vendor_id"), routes.cpuinfo_field("flags")) == ("AuthenticAMD", "fpu avx2")
    assert routes.cpuinfo_field("no such key") == ""
    cpuinfo.unlink()
    assert routes.cpuinfo_field("vendor_id") == ""


@pytest.mark.skipif(routes.cpuinfo_field("vendor_id") == "", reason="no x86 /proc/cpuinfo here")
def test_cpuinfo_field_matches_the_whole_key():
    """x86's /proc/cpuinfo has "cpu family" and "cpu MHz" but no "cpu"; "model" and "model name"
    are two fields."""
    assert routes.cpuinfo_field("cpu") == ""
    assert routes.cpuinfo_field("model").isdigit() and not routes.cpuinfo_field("model name").isdigit()
