"""vldbench.technology: the technology table from table2 and bench-fig8 raw files."""
import json

import pytest

from vldbench import technology

PARTS = {"overhead": 200.0, "seek": 1000.0, "head_switch": 1.0, "rotation": 4000.0,
         "transfer": 20.0}


def table2_line(mode, mean_us, compacted=None):
    row = {"experiment": "table2", "mode": mode, "mean_us": mean_us, "writes": 2000,
           "utilization": 0.8, "breakdown_us": dict(PARTS, locate=5001.0)}
    if compacted is not None:
        row["compacted"] = compacted
    return json.dumps(row)


def write_run(tmp_path, presets, lld=None):
    raw = tmp_path / "raw"
    (raw / "fig8").mkdir(parents=True)
    for i, p in enumerate(presets):
        lines = [table2_line("vld", 200.0 + i), table2_line("vld", 400.0 + i, compacted=False),
                 table2_line("inplace", 6000.0 - i)]
        (raw / f"{p}.table2.jsonl").write_text("\n".join(lines) + "\n")
    rows = [{"geometry": p, "mode": "lld", "update_mean_us": us} for p, us in (lld or {}).items()]
    (raw / "fig8" / "results.json").write_text(json.dumps({"rows": rows}))


def test_rows_by_year_with_ratios_and_lld(tmp_path):
    write_run(tmp_path, ["hc310", "hp97560"], lld={"hp97560": 900.0})
    technology.main([str(tmp_path), "--presets", "hc310 hp97560", "--command", "CMD"])
    out = json.loads((tmp_path / "technology.json").read_text())
    assert out["command"] == "CMD"
    assert [r["preset"] for r in out["rows"]] == ["hp97560", "hc310"]  # by year
    hp, hc = out["rows"]
    assert (hp["year"], hc["year"]) == (1992, 2018)
    assert hp["inplace_over_vld_compacted"] == pytest.approx(5999.0 / 201.0)
    assert hc["inplace_over_vld"] == pytest.approx(6000.0 / 400.0)
    assert hp["lld_nvram_us"] == 900.0 and hc["lld_nvram_us"] is None
    assert hp["breakdown_us"]["inplace"] == PARTS
    md = (tmp_path / "table.md").read_text()
    assert "| hp97560 | 1992 | 5999 | 201 | 401 | 900 | 29.8x, 15.0x |" in md
    assert "| hc310 | 2018 | 6000 | 200 | 400 | — |" in md
    assert (tmp_path / "technology.png").read_bytes()[:4] == b"\x89PNG"


def test_a_table2_run_without_the_uncompacted_vld_is_refused(tmp_path):
    write_run(tmp_path, ["st19101"])
    path = tmp_path / "raw" / "st19101.table2.jsonl"
    path.write_text(table2_line("vld", 200.0) + "\n" + table2_line("inplace", 6000.0) + "\n")
    with pytest.raises(AssertionError, match="--uncompacted"):
        technology.main([str(tmp_path), "--presets", "st19101"])
