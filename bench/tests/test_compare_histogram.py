"""vld-compare's histograms (vldcompare.runs): bucket bounds from the
histogram_scheme of docs/stats.md, and the CDF, checked by hand."""
import pytest

from vldcompare import runs

SCHEME = {"unit": "us", "sub_buckets": 16, "linear_below_us": 32}


@pytest.mark.parametrize("us, bounds", [
    # docs/stats.md's examples
    (0.999, (0, 1)), (32, (32, 34)), (33.999, (32, 34)), (100, (100, 104)),
    (5000, (4864, 5120)),
    # the edges of the linear part and of a power of two
    (31, (31, 32)), (63, (62, 64)), (64, (64, 68)), (8191, (7936, 8192)),
    (8192, (8192, 8704)),
])
def test_bucket_bounds_follow_the_scheme(us, bounds):
    assert runs.bucket_bounds(runs.bucket_index(us, SCHEME), SCHEME) == bounds


def test_every_bucket_begins_where_the_one_before_ends():
    previous = runs.bucket_bounds(0, SCHEME)
    for i in range(1, 400):
        low, high = runs.bucket_bounds(i, SCHEME)
        assert low == previous[1] and high > low
        previous = (low, high)


def test_cdf_of_a_hand_made_histogram():
    # 2 samples in [100, 104), 1 in [4864, 5120), 1 in [9216, 9728)
    hist = [[100, 104, 2], [4864, 5120, 1], [9216, 9728, 1]]
    assert runs.cdf_points(runs.normalise_histogram(hist, SCHEME)) == [
        (100, 0.0), (104, 0.5), (5120, 0.75), (9728, 1.0)]


def test_index_pairs_read_through_the_scheme():
    assert runs.normalise_histogram([[57, 2], [147, 1]], SCHEME) == [
        [100, 104, 2], [4864, 5120, 1]]


def test_merge_adds_bucket_by_bucket():
    assert runs.merge_histograms([[[100, 104, 2]], [[32, 34, 1], [100, 104, 1]]]) == [
        [32, 34, 1], [100, 104, 3]]


def test_a_bucket_off_the_scheme_is_refused():
    with pytest.raises(ValueError, match="not one of histogram_scheme's"):
        runs.normalise_histogram([[100, 110, 1]], SCHEME)


def test_an_unknown_scheme_is_refused():
    with pytest.raises(ValueError, match="unknown bucket scheme"):
        runs.bucket_bounds(40, {"unit": "us", "sub_buckets": 10, "linear_below_us": 32})
    with pytest.raises(ValueError, match="not in microseconds"):
        runs.bucket_bounds(40, {"unit": "ns", "sub_buckets": 16, "linear_below_us": 32})


def test_cdf_of_nothing_is_empty():
    assert runs.cdf_points([]) == []
