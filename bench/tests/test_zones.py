"""vldbench.zones: the per-band table from bench-zones' raw files."""
import json

from vldbench import zones

PARTS = {"overhead": 200.0, "seek": 5.0, "head_switch": 1.0, "rotation": 4.0, "transfer": 20.0,
         "locate": 10.0}


def line(mode, mean_us, compacted=None, transfer=20.0):
    row = {"experiment": "table2", "mode": mode, "mean_us": mean_us, "utilization": 0.8,
           "breakdown_us": dict(PARTS, transfer=transfer)}
    if compacted is not None:
        row["compacted"] = compacted
    return json.dumps(row)


def write_band(raw, band, spt, first, scale, fills):
    key = f"d-{band}"
    (raw / f"{key}.table2.jsonl").write_text("\n".join(
        [line("vld", 200 * scale, transfer=20 * scale), line("vld", 400 * scale, False),
         line("inplace", 5000)]) + "\n")
    (raw / f"{key}.fig10.jsonl").write_text(json.dumps({"mean_us": 600 * scale}) + "\n")
    stats = {"geometry": {"sectors_per_track": 0,
                          "span": {"first_cylinder": first, "last_cylinder": first + 9,
                                   "drive_cylinders": 100},
                          "zones": [{"sectors_per_track": spt}]},
             "vld": {"log_records_written": 4, "log_record_us": 4 * 6000.0}}
    (raw / f"{key}.table2.stats.json").write_text(json.dumps(stats))
    for f, us in zip(fills, (250, 240, 230)):
        (raw / f"{key}.fill{f}.table2.jsonl").write_text(
            line("vld", us * scale) + "\n" + line("inplace", 5000) + "\n")


def test_bands_in_order_with_the_best_fill(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    fills = [50, 75, 90]
    write_band(raw, "outer", 400, 0, 1.0, fills)
    write_band(raw, "inner", 200, 90, 1.5, fills)
    zones.main([str(tmp_path), "--drives", "d", "--bands", "outer inner", "--fills", "50 75 90"])
    out = json.loads((tmp_path / "zones.json").read_text())["rows"]
    assert [r["band"] for r in out] == ["outer", "inner"]
    assert out[1]["mean_us"] == {"inplace": 5000, "vld_compacted": 300, "vld": 600, "lld": 900}
    assert out[0]["log_record_us_each"] == 6000.0
    md = (tmp_path / "table.md").read_text()
    assert "| d | inner (90–99) | 200–200 | 5000 | 300 | 600 | 900 | 30 / 10 | 6000 |" in md
    assert "| d | outer | 250 | 240 | 230 | 90% |" in md
    assert (tmp_path / "zones.png").read_bytes()[:4] == b"\x89PNG"
