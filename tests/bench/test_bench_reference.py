"""BENCHMARKS.md is the reference to bench/: every script left there is named under its
targets table, with the target it guards and the command that runs it."""

from checkout import ROOT


def test_every_bench_script_is_named_under_the_targets_table() -> None:
    # bench/ keeps what guards a target: each script left is named in BENCHMARKS.md's targets
    # table (or the helpers' paragraph under it), before the targets measured once
    text = (ROOT / "BENCHMARKS.md").read_text("utf-8")
    start, end = text.index("## Targets and commands"), text.index("### Targets measured once")
    reference = text[start:end]
    scripts = sorted(path.name for path in (ROOT / "bench").glob("*.py"))
    assert scripts
    assert [name for name in scripts if f"`{name}`" not in reference] == []
