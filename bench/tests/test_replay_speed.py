"""bench-replay's synthetic traces: fio v3 lines, as many requests as asked,
times in microseconds that never go back, a sync after every 4th write."""
from vldbench.replay_speed import synthetic_lines


def test_synthetic_trace_is_a_fio_v3_iolog_of_n_requests():
    lines = list(synthetic_lines(1000, export_blocks=100, seed=3))
    assert lines[0] == "fio version 3 iolog\n"
    body = [ln.split() for ln in lines[1:]]
    assert len(body) == 1000
    times = [int(f[0]) for f in body]
    assert times == sorted(times)
    assert times[-1] > 1000 * 5 * 1000 * 0.8  # about 5 ms a request, in microseconds
    ops = [f[2] for f in body]
    writes, syncs = ops.count("write"), ops.count("sync")
    assert ops.count("read") + writes + syncs == 1000
    assert syncs == writes // 4
    for f in body:
        if f[2] != "sync":
            assert int(f[3]) % 4096 == 0 and int(f[3]) < 100 * 4096 and f[4] == "4096"
