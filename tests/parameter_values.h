// Good and bad values for every parameter of plugin/parameters.h.
//
// tests/unit/options_test.cc applies each row with set_option() and checks
// that the table has good and bad rows for every parameter (a new parameter
// fails that test until it has rows here); tests/integration/
// bad_params_test.cc runs the real nbdkit, whose parsers read the values,
// with each bad row.
//
// A bad row's `problem` is text its one-line error must hold after
// "key=value: ": the problem and, for a range, the bound.
#ifndef VLD_TESTS_PARAMETER_VALUES_H_
#define VLD_TESTS_PARAMETER_VALUES_H_

namespace vld::test {

struct GoodValue {
  const char* key;
  const char* value;
};

struct BadValue {
  const char* key;
  const char* value;
  const char* problem;
};

inline constexpr GoodValue kGoodValues[] = {
    {"file", "/tmp/vld-test.img"},
    // Sizes: nbdkit_parse_size's forms.
    {"size", "1G"}, {"size", "131072s"}, {"size", "512"}, {"size", "64m"}, {"size", "1E"},
    {"size", "+4M"}, {"size", " 4M"}, {"size", "4096B"},
    {"mode", "vld"}, {"mode", "inplace"}, {"mode", "lld"},
    {"geometry", "st19101"}, {"geometry", "hp97560"}, {"geometry", "hp97560-rw"},
    {"geometry", "savvio10k4"},
    {"block", "4096"}, {"block", "4K"}, {"block", "8s"}, {"block", "512"}, {"block", "64K"},
    // Whole numbers: nbdkit_parse_uint64_t's (decimal, 0x hex, 0 octal).
    {"spare", "0"}, {"spare", "1000"}, {"spare", "0x19"},
    {"span", "0-9999"}, {"span", "20000"}, {"span", "90%-100%"}, {"span", "10%"},
    {"span", "99.5%-100%"},
    {"sectors_per_track", "256"}, {"sectors_per_track", "4294967295"},
    {"tracks_per_cylinder", "16"}, {"tracks_per_cylinder", "020"},
    {"cylinders", "6962"}, {"cylinders", "1"},
    {"rpm", "10000"}, {"rpm", "0x2710"},
    {"head_switch_us", "500"}, {"head_switch_us", "250.5"}, {"head_switch_us", "0"},
    {"overhead_us", "100"}, {"overhead_us", "1e6"},
    {"seek", "3.24,0.400,383,8.00,0.008"},
    {"segment", "512K"}, {"segment", "1M"}, {"segment", "1024s"},
    {"nvram", "0"}, {"nvram", "6100000"}, {"nvram", "8M"},
    {"fill", "1"}, {"fill", "100"}, {"fill", "075"},
    {"window", "32"}, {"window", "0x20"},
    {"checkpoint_every", "0"}, {"checkpoint_every", "4096"},
    {"checkpoint_s", "0"}, {"checkpoint_s", "86400"},
    // Booleans: nbdkit_parse_bool's.
    {"track_buffer", "on"}, {"track_buffer", "off"}, {"track_buffer", "yes"},
    {"track_buffer", "NO"}, {"track_buffer", "True"}, {"track_buffer", "0"},
    {"compactor", "1"}, {"compactor", "false"}, {"compactor", "y"}, {"compactor", "OFF"},
    {"compactor_policy", "fewest-live"}, {"compactor_policy", "cost-benefit"},
    {"compactor_policy", "random"},
    {"compactor_quiet_ms", "0"}, {"compactor_quiet_ms", "3600000"},
    {"partial", "1"}, {"partial", "100"},
    {"cleaner_policy", "greedy"}, {"cleaner_policy", "cost-benefit"},
    {"nvram_us", "20"}, {"nvram_us", "2.5"},
    {"aru_max", "4K"}, {"aru_max", "32M"}, {"aru_max", "1G"},
    {"latency", "sleep"}, {"latency", "none"},
    {"sched", "fifo"}, {"sched", "sptf"},
    {"sched_aging_ms", "1"}, {"sched_aging_ms", "10000"},
    {"statsfile", "/tmp/vld-test-stats.json"},
    {"stats_interval", "0"}, {"stats_interval", "1"}, {"stats_interval", "86400"},
    {"profile", "phases"}, {"profile", "none"},
    {"seed", "0"}, {"seed", "18446744073709551615"}, {"seed", "0xffffffffffffffff"},
};

inline constexpr BadValue kBadValues[] = {
    {"file", "", "must name the backing image"},
    {"size", "0", "too small (at least 512 bytes)"},
    {"size", "511", "too small (at least 512 bytes)"},
    {"size", "16E", "too large (at most 9223372036854775807 bytes)"},
    {"size", "8E", "too large"},
    {"size", "99999999999999999999", "too large"},
    {"size", "abc", "not a size"},
    {"size", "1.5G", "not a size"},
    {"size", "1GiB", "not a size"},
    {"size", "0x1000", "not a size"},
    {"size", "-1", "negative"},
    {"size", "", "not a size"},
    {"mode", "lfs", "expected mode=vld, mode=inplace or mode=lld"},
    {"mode", "LLD", "expected mode=vld"},
    {"geometry", "foo", "unknown geometry; choose one of"},
    {"geometry", "", "unknown geometry"},
    {"block", "1000", "power of two"},
    {"block", "256", "too small (at least 512 bytes)"},
    {"block", "128K", "too large (131072 bytes; at most 64K)"},
    {"block", "4k4", "not a size"},
    {"spare", "1001", "too large (at most 1000)"},
    {"spare", "-1", "negative"},
    {"spare", "25%", "not a whole number"},
    {"span", "10-5", "expected FIRST-LAST (drive cylinders, e.g. span=0-9999)"},
    {"span", "0", "expected FIRST-LAST"},
    {"span", "50%-10%", "expected FIRST-LAST"},
    {"span", "0-10%", "expected FIRST-LAST"},
    {"span", "101%", "expected FIRST-LAST"},
    {"span", "", "expected FIRST-LAST"},
    {"sectors_per_track", "0", "too small (at least 1)"},
    {"sectors_per_track", "4294967296", "too large (at most 4294967295)"},
    {"sectors_per_track", "x", "not a whole number"},
    {"tracks_per_cylinder", "0", "too small (at least 1)"},
    {"tracks_per_cylinder", "1.5", "not a whole number"},
    {"cylinders", "0", "too small"},
    {"cylinders", "99999999999", "too large (at most 4294967295)"},
    {"cylinders", "7k", "not a whole number"},
    {"rpm", "0", "too small"},
    {"rpm", "fast", "not a whole number"},
    {"head_switch_us", "-1", "negative"},
    {"head_switch_us", "abc", "not a number"},
    {"head_switch_us", "1000000.5", "too large (at most 1000000)"},
    {"overhead_us", "1ms", "not a number"},
    {"overhead_us", "1e300", "too large"},
    {"overhead_us", "", "not a number"},
    {"seek", "1,2,3", "seek=3.24,0.400,383,8.00,0.008"},
    {"seek", "", "e.g. seek="},
    {"segment", "0", "too small (at least 1 byte)"},
    {"segment", "half", "not a size"},
    {"segment", "-1", "negative"},
    {"nvram", "6.1M", "not a size"},
    {"nvram", "-1", "negative"},
    {"nvram", "", "not a size"},
    {"fill", "0", "too small (at least 1)"},
    {"fill", "101", "too large (at most 100)"},
    {"fill", "0x65", "too large (101; at most 100)"},
    {"fill", "08", "not a whole number"},  // a leading 0 is octal, as in every nbdkit plugin
    {"window", "0", "too small (at least 1)"},
    {"window", "4294967296", "too large"},
    {"window", "32 cylinders", "not a whole number"},
    {"checkpoint_every", "many", "not a whole number"},
    {"checkpoint_every", "4294967296", "too large (at most 4294967295)"},
    {"checkpoint_s", "86401", "too large (at most 86400)"},
    {"checkpoint_s", "1m", "not a whole number"},
    {"track_buffer", "sometimes", "not a boolean"},
    {"track_buffer", "", "not a boolean"},
    {"track_buffer", "2", "not a boolean"},
    {"compactor", "onn", "not a boolean"},
    {"compactor", "", "not a boolean"},
    {"compactor_policy", "greedy", "expected compactor_policy=fewest-live"},
    {"compactor_policy", "", "expected compactor_policy="},
    {"compactor_quiet_ms", "3600001", "too large (at most 3600000)"},
    {"compactor_quiet_ms", "-1", "negative"},
    {"compactor_quiet_ms", "5s", "not a whole number"},
    {"partial", "0", "too small (at least 1)"},
    {"partial", "101", "too large (at most 100)"},
    {"partial", "75%", "not a whole number"},
    {"partial", "", "not a whole number"},
    {"cleaner_policy", "fewest-live", "expected cleaner_policy=greedy"},
    {"cleaner_policy", "Greedy", "expected cleaner_policy=greedy"},
    {"nvram_us", "-1", "negative"},
    {"nvram_us", "fast", "not a number"},
    {"nvram_us", "1000001", "too large (at most 1000000)"},
    {"aru_max", "1K", "too small (1024 bytes; at least 4K)"},
    {"aru_max", "2G", "too large (2147483648 bytes; at most 1G)"},
    {"aru_max", "lots", "not a size"},
    {"latency", "fast", "expected latency=sleep or latency=none"},
    {"latency", "", "expected latency=sleep"},
    {"sched", "bogus", "expected sched=fifo or sched=sptf"},
    {"sched_aging_ms", "0", "too small (at least 1)"},
    {"sched_aging_ms", "10001", "too large (at most 10000)"},
    {"sched_aging_ms", "0.5", "not a whole number"},
    {"statsfile", "", "must name a file"},
    {"stats_interval", "86401", "too large (at most 86400)"},
    {"stats_interval", "1s", "not a whole number"},
    {"stats_interval", "-1", "negative"},
    {"profile", "cpu", "expected profile=phases or profile=none"},
    {"seed", "-1", "negative"},
    {"seed", "-0", "negative"},
    {"seed", "abc", "not a whole number"},
    {"seed", "", "not a whole number"},
    {"seed", "18446744073709551616", "too large"},
};

}  // namespace vld::test

#endif  // VLD_TESTS_PARAMETER_VALUES_H_
