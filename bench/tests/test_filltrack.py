"""vldbench.filltrack: the fill track's waits, greedy and best, on hand-checked tracks."""
from vldbench import filltrack


def test_a_command_that_fits_at_the_head_waits_nothing():
    # 20 sectors, a gap of 0: the second command starts where the first ended (9-16, map 17).
    assert filltrack.greedy(20, 0, 2) == [0, 0]
    # 16 sectors: 9-15 hold only 7, and no run of 8 is left: the track takes no second block.
    assert filltrack.greedy(16, 0, 2) == [0]


def test_greedy_can_lose_to_a_wait_that_leaves_room_behind():
    # 27 sectors, gap 8. Greedy: 0-7 + map 8, arrive 17; 17-24 + map 25, arrive 7;
    # data 9-16 (wait 2), map 26 behind 17-25 (wait 9): 11. Best: the second command
    # waits one sector (18-25 + map 26), arrives at 8, and the third fits 9-16 + map 17
    # after one more: 2.
    assert filltrack.greedy(27, 8, 3) == [0, 0, 11]
    assert filltrack.best(27, 8, 3, runs=27) == [0, 1, 1]


def test_map_sector_goes_before_the_data_when_that_ends_sooner():
    # 20 sectors, 0-8 and 10-11 taken, the head at 9: data 12-19 with the map sector in 9 on
    # the way waits 2 (10, 11); data first (3 sectors on) puts the map sector behind it, at
    # 9 again once 0-8 have passed (9 more): 12.
    mask = filltrack._take(filltrack._take(0, 20, 0, 9), 20, 10, 2)
    opts = filltrack.options(mask, 20, 9, runs=20)
    assert sorted(w for w, _, _ in opts) == [2, 12]
    assert (2, filltrack._take(mask, 20, 9, 1) | filltrack._take(0, 20, 12, 8), 0) in opts


def test_hp97560_fill_track_greedy_is_the_best_order():
    # The preset: 72 sectors, two 2.3 ms controller overheads between commands (flush,
    # then write) = 22.1 sector times of 208.2 us: the next whole sector is 23 on.
    gap = filltrack.gap_sectors(4600, 208.2)
    assert gap == 23
    g = filltrack.greedy(72, gap, 6)
    assert g == [0, 0, 9, 8, 9, 8]
    assert filltrack.best(72, gap, 6, runs=3) == g
