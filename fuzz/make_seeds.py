#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target into tests/fixtures/fuzz/<target>/.

The seeds are small, meaningful inputs: the bad-input corpus's files of each kind
(tests/fixtures/bad/), the bundled sample, valid inputs for the targets' fixed
hierarchy (nation,state,county: US / A,B / a1,a2,b1,b2), their near misses, and for
`ledger` a ledger written by a real release (pass its home directory). The replay test
(tests/library/fuzz_regressions.rs) runs every file through its target and fails when a
corpus is missing or holds fewer than ten files. Files already there (the fuzzers'
findings) are kept; seeds are named `seed-*` and rewritten.

Usage: python3 fuzz/make_seeds.py HOME_WITH_A_REAL_LEDGER
"""

import pathlib
import random
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BAD = ROOT / "tests/fixtures/bad"
OUT = ROOT / "tests/fixtures/fuzz"
SAMPLE = ROOT / "sample-data/households"

HIERARCHY = b"nation,state,county\nUS,A,a1\nUS,A,a2\nUS,B,b1\nUS,B,b2\n"


def write(target, name, data):
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f"seed-{name}").write_bytes(data)


def from_bad(target, file):
    for case in sorted(BAD.iterdir()):
        f = case / file
        if f.is_file() and f.stat().st_size <= 4096:
            write(target, f"bad-{case.name}", f.read_bytes())


def head(path, lines):
    return b"".join(path.read_bytes().splitlines(keepends=True)[:lines])


def main():
    home = pathlib.Path(sys.argv[1])
    for d in OUT.iterdir():
        for f in d.glob("seed-*"):
            f.unlink()

    # hierarchy: the target's own, the sample's first rows, and the bad corpus.
    from_bad("hierarchy", "hierarchy.csv")
    write("hierarchy", "fixed", HIERARCHY)
    write("hierarchy", "sample-head", head(SAMPLE / "hierarchy.csv", 40))
    write("hierarchy", "one-level", b"nation\nUS\n")
    write("hierarchy", "crlf", HIERARCHY.replace(b"\n", b"\r\n"))
    write("hierarchy", "quoted", b'"nation","state"\n"US","A ""x"""\n')

    # group_sizes: groups of the fixed hierarchy, and the bad corpus.
    from_bad("group_sizes", "groups.csv")
    write("group_sizes", "valid", b"group_id,region,size\ng1,a1,1\ng2,a2,3\ng3,b1,2\n")
    write("group_sizes", "header-only", b"group_id,region,size\n")
    write("group_sizes", "size-zero", b"group_id,region,size\ng1,b2,0\ng2,b2,0\n")
    write("group_sizes", "large-size", b"group_id,region,size\ng1,a1,4294967295\n")
    write("group_sizes", "not-a-leaf", b"group_id,region,size\ng1,A,1\n")
    write("group_sizes", "duplicate-id", b"group_id,region,size\ng1,a1,1\ng1,a2,2\n")
    write("group_sizes", "many", b"group_id,region,size\n" + b"".join(
        b"g%d,%s,%d\n" % (i, [b"a1", b"a2", b"b1", b"b2"][i % 4], i % 7) for i in range(60)))

    # entities: groups.csv, a zero byte, entities.csv.
    groups = b"group_id,region\ng1,a1\ng2,a2\ng3,b1\n"
    for name, ents in [
        ("valid", b"entity_id,group_id\ne1,g1\ne2,g1\ne3,g2\ne4,g3\n"),
        ("unknown-group", b"entity_id,group_id\ne1,g9\n"),
        ("duplicate-entity", b"entity_id,group_id\ne1,g1\ne1,g2\n"),
        ("header-only", b"entity_id,group_id\n"),
        ("empty", b""),
        ("crlf", b"entity_id,group_id\r\ne1,g1\r\n"),
        ("no-header", b"e1,g1\n"),
        ("quoted", b'entity_id,group_id\n"e,1","g1"\n'),
        ("nul-after", b"entity_id,group_id\ne1,g1\n\x00e2,g2\n"),
    ]:
        write("entities", name, groups + b"\x00" + ents)
    write("entities", "sizes-and-entities",
          b"group_id,region,size\ng1,a1,1\n\x00entity_id,group_id\ne1,g1\n")
    write("entities", "no-zero-byte", groups)
    for case in sorted(BAD.iterdir()):
        if (case / "entities.csv").is_file():
            g = case / "groups.csv"
            write("entities", f"bad-{case.name}",
                  (g.read_bytes() if g.is_file() else b"") + b"\x00" + (case / "entities.csv").read_bytes())

    # histograms: the fixed hierarchy's leaves, and the bad corpus.
    from_bad("histograms", "histograms.csv")
    write("histograms", "valid", b"region,size,count\na1,1,3\na1,2,1\na2,0,4\nb1,5,2\nb2,1,1\n")
    write("histograms", "header-only", b"region,size,count\n")
    write("histograms", "count-zero", b"region,size,count\na1,1,0\n")
    write("histograms", "huge-count", b"region,size,count\na1,1,9223372036854775807\n")
    write("histograms", "duplicate-cell", b"region,size,count\na1,1,1\na1,1,2\n")
    write("histograms", "negative", b"region,size,count\na1,-1,1\n")
    write("histograms", "inner-region", b"region,size,count\nA,1,1\n")

    # names: names of the fixed hierarchy's regions, and the bad corpus.
    from_bad("names", "names.csv")
    write("names", "valid", b"region,name\nUS,United States\nUS/A,Alpha\nUS/A/a1,First\n")
    write("names", "header-only", b"region,name\n")
    write("names", "unknown-region", b"region,name\nUS/C,Gamma\n")
    write("names", "duplicate", b"region,name\nUS,One\nUS,Two\n")
    write("names", "formula", b"region,name\nUS,=1+1\n")
    write("names", "unicode", "region,name\nUS/B,Ünïcödé ✓\n".encode())
    write("names", "control", b"region,name\nUS,a\x07b\n")
    write("names", "crlf", b"region,name\r\nUS,United States\r\n")

    # plan: plans for the fixed hierarchy and the bad corpus.
    from_bad("plan", "plan.toml")
    write("plan", "valid", (BAD / "valid-plan.toml").read_bytes())
    level = lambda n, e, m: f'[[level]]\nname = "{n}"\nepsilon = "{e}"\nmethod = "{m}"\n\n'
    for name, top, levels in [
        ("hg-naive", "max_size = 12\n", [("nation", "1", "hc"), ("state", "0.5", "hg"), ("county", "1/4", "naive")]),
        ("topdown", 'max_size = 8\nconsistency = "topdown"\n', [("nation", "1/3", "hc")] * 1 + [("state", "1/3", "hc"), ("county", "1/3", "hc")]),
        ("wls-average", 'max_size = 5\nconsistency = "wls"\nmerge = "average"\n', [("nation", "1", "hc"), ("state", "1", "hc"), ("county", "1", "hc")]),
        ("two-levels", "max_size = 3\n", [("nation", "1", "hc"), ("county", "1", "hc")]),
        ("tiny-epsilon", "max_size = 2\n", [("nation", "1e-9", "hc"), ("state", "1e-9", "hc"), ("county", "1e-9", "hc")]),
        ("no-levels", "max_size = 10\n", []),
        ("unknown-level", "max_size = 10\n", [("country", "1", "hc")]),
    ]:
        write("plan", name, (top + "\n" + "".join(level(*l) for l in levels)).encode())
    write("plan", "estimated-k", b'[max_size]\nestimate = "1/10"\n\n' + b"".join(
        level(n, "1/3", "hc").encode() for n in ["nation", "state", "county"]))

    # ledger: ledger.jsonl, a zero byte, config.toml; lines from a real release.
    lines = (home / "ledger.jsonl").read_bytes().splitlines(keepends=True)
    assert len(lines) >= 2, "the home's ledger holds at least two lines"
    caps = [b"", b'default_cap = "1/2"\n', b'default_cap = "10"\n', b"default_cap = 1\n",
            b"[caps]\n", b"default_cap = \"-1\"\n", b"not toml ==\n"]
    write("ledger", "empty", b"")
    write("ledger", "one-line", lines[0])
    write("ledger", "all-lines", b"".join(lines))
    for i, cap in enumerate(caps):
        write("ledger", f"all-lines-cap-{i}", b"".join(lines) + b"\x00" + cap)
    write("ledger", "torn-last", b"".join(lines)[:-20])
    write("ledger", "reordered", b"".join(reversed(lines)))
    write("ledger", "duplicated", b"".join(lines) + lines[-1])
    write("ledger", "edited-epsilon", b"".join(lines).replace(b'"1/', b'"2/', 1))
    write("ledger", "blank-line", lines[0] + b"\n" + b"".join(lines[1:]))
    write("ledger", "crlf", b"".join(l.rstrip(b"\n") + b"\r\n" for l in lines))
    write("ledger", "not-json", b"{\n")
    write("ledger", "legacy-v1", b'{"v":1}\n')

    # consistency: bytes read as small numbers; fixed pseudo-random seeds of each length.
    rng = random.Random(24)
    for n in [0, 1, 8, 16, 32, 64, 128, 256, 512, 1024]:
        write("consistency", f"random-{n}", bytes(rng.randrange(256) for _ in range(n)))
    for b in [0x00, 0x01, 0x0f, 0x10, 0x7f, 0x80, 0xff]:
        write("consistency", f"all-{b:02x}", bytes([b]) * 256)
    for depth in range(3):
        for method in range(4):
            # depth, children, K, groups…, then the method byte everywhere.
            write("consistency", f"depth-{depth}-method-{method}",
                  bytes([depth, 2, 2, 11] + [3, 5, 1] * 8 + [method, 0] * 40 + [4] * 64))


if __name__ == "__main__":
    main()
